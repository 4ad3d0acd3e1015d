build-tsan/obj/models/command_r.o: src/models/command_r.c \
  src/llama/arch.h include/ggfit.h

src/llama/arch.h:

include/ggfit.h:
