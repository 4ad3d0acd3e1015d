build-tsan/obj/devices/rpc.o: src/devices/rpc.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
