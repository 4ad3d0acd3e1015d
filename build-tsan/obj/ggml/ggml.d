build-tsan/obj/ggml/ggml.o: src/ggml/ggml.c src/ggml/ggml.h \
  src/ggml/galloc.h include/ggfit.h src/ggml/ops.h src/base/base.h \
  src/ggml/sched.h

src/ggml/ggml.h:

src/ggml/galloc.h:

include/ggfit.h:

src/ggml/ops.h:

src/base/base.h:

src/ggml/sched.h:
