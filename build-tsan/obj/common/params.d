build-tsan/obj/common/params.o: src/common/params.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
