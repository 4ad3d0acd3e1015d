build-tsan/obj/ggml/backend.o: src/ggml/backend.c src/ggml/backend.h \
  include/ggfit.h src/ggml/sched.h src/ggml/galloc.h src/ggml/ops.h

src/ggml/backend.h:

include/ggfit.h:

src/ggml/sched.h:

src/ggml/galloc.h:

src/ggml/ops.h:
