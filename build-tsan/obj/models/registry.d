build-tsan/obj/models/registry.o: src/models/registry.c src/llama/arch.h \
  include/ggfit.h

src/llama/arch.h:

include/ggfit.h:
