build-tsan/obj/llama/compute_estimate.o: src/llama/compute_estimate.c \
  src/base/base.h include/ggfit.h src/llama/project.h src/llama/arch.h \
  src/llama/model.h

src/base/base.h:

include/ggfit.h:

src/llama/project.h:

src/llama/arch.h:

src/llama/model.h:
