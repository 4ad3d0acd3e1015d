build-tsan/obj/models/mixtral.o: src/models/mixtral.c src/llama/arch.h \
  include/ggfit.h

src/llama/arch.h:

include/ggfit.h:
