build-tsan/obj/render/projection.o: src/render/projection.c \
  src/base/base.h include/ggfit.h

src/base/base.h:

include/ggfit.h:
