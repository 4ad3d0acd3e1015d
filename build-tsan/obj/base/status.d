build-tsan/obj/base/status.o: src/base/status.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
