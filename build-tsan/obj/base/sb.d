build-tsan/obj/base/sb.o: src/base/sb.c src/base/base.h include/ggfit.h

src/base/base.h:

include/ggfit.h:
