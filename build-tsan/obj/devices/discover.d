build-tsan/obj/devices/discover.o: src/devices/discover.c src/base/base.h \
  include/ggfit.h src/devices/catalog.h

src/base/base.h:

include/ggfit.h:

src/devices/catalog.h:
