build-tsan/obj/devices/discover.o: src/devices/discover.c src/base/base.h \
  include/ggfit.h src/ggml/backend.h src/ggml/sched.h src/ggml/galloc.h \
  src/ggml/ops.h src/devices/catalog.h

src/base/base.h:

include/ggfit.h:

src/ggml/backend.h:

src/ggml/sched.h:

src/ggml/galloc.h:

src/ggml/ops.h:

src/devices/catalog.h:
