build-tsan/obj/models/starcoder2.o: src/models/starcoder2.c \
  src/llama/arch.h include/ggfit.h

src/llama/arch.h:

include/ggfit.h:
