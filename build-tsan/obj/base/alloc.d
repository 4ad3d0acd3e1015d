build-tsan/obj/base/alloc.o: src/base/alloc.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
