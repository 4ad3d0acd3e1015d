build-tsan/obj/llama/memory_recurrent.o: src/llama/memory_recurrent.c \
  src/base/base.h include/ggfit.h src/llama/project.h src/llama/arch.h \
  src/llama/model.h

src/base/base.h:

include/ggfit.h:

src/llama/project.h:

src/llama/arch.h:

src/llama/model.h:
