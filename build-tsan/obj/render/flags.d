build-tsan/obj/render/flags.o: src/render/flags.c src/base/base.h \
  include/ggfit.h src/llama/patterns.h

src/base/base.h:

include/ggfit.h:

src/llama/patterns.h:
