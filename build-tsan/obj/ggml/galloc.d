build-tsan/obj/ggml/galloc.o: src/ggml/galloc.c src/ggml/galloc.h \
  include/ggfit.h src/ggml/ops.h src/base/base.h

src/ggml/galloc.h:

include/ggfit.h:

src/ggml/ops.h:

src/base/base.h:
