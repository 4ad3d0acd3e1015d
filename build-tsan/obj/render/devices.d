build-tsan/obj/render/devices.o: src/render/devices.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
