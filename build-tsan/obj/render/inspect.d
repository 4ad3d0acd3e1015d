build-tsan/obj/render/inspect.o: src/render/inspect.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
