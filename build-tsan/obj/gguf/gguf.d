build-tsan/obj/gguf/gguf.o: src/gguf/gguf.c src/base/base.h \
  include/ggfit.h

src/base/base.h:

include/ggfit.h:
