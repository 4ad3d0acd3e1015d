build-tsan/obj/models/plamo2.o: src/models/plamo2.c src/llama/arch.h \
  include/ggfit.h

src/llama/arch.h:

include/ggfit.h:
