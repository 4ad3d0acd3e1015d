build-tsan/obj/gguf/types.o: src/gguf/types.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
