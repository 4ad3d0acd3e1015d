build-tsan/obj/devices/order.o: src/devices/order.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
