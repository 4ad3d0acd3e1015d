build-tsan/obj/common/request.o: src/common/request.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
