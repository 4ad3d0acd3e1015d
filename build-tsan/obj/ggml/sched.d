build-tsan/obj/ggml/sched.o: src/ggml/sched.c src/base/base.h \
  include/ggfit.h src/ggml/sched.h src/ggml/galloc.h src/ggml/ops.h

src/base/base.h:

include/ggfit.h:

src/ggml/sched.h:

src/ggml/galloc.h:

src/ggml/ops.h:
