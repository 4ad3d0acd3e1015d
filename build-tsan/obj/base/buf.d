build-tsan/obj/base/buf.o: src/base/buf.c src/base/base.h include/ggfit.h

src/base/base.h:

include/ggfit.h:
