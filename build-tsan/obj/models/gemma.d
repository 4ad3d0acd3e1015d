build-tsan/obj/models/gemma.o: src/models/gemma.c src/llama/arch.h \
  include/ggfit.h

src/llama/arch.h:

include/ggfit.h:
