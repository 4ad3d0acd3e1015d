build-tsan/obj/llama/buft.o: src/llama/buft.c src/base/base.h \
  include/ggfit.h src/ggml/backend.h src/ggml/sched.h src/ggml/galloc.h \
  src/ggml/ops.h src/llama/project.h src/llama/arch.h src/llama/model.h

src/base/base.h:

include/ggfit.h:

src/ggml/backend.h:

src/ggml/sched.h:

src/ggml/galloc.h:

src/ggml/ops.h:

src/llama/project.h:

src/llama/arch.h:

src/llama/model.h:
