build-tsan/obj/devices/spec.o: src/devices/spec.c src/base/base.h \
  include/ggfit.h src/devices/catalog.h src/ggml/backend.h \
  src/ggml/sched.h src/ggml/galloc.h src/ggml/ops.h

src/base/base.h:

include/ggfit.h:

src/devices/catalog.h:

src/ggml/backend.h:

src/ggml/sched.h:

src/ggml/galloc.h:

src/ggml/ops.h:
