build-tsan/obj/devices/catalog.o: src/devices/catalog.c src/base/base.h \
  include/ggfit.h src/devices/catalog.h build-tsan/catalog_data.h

src/base/base.h:

include/ggfit.h:

src/devices/catalog.h:

build-tsan/catalog_data.h:
