build-tsan/obj/llama/model.o: src/llama/model.c src/base/base.h \
  include/ggfit.h src/llama/arch.h src/llama/model.h \
  src/llama/patterns.h

src/base/base.h:

include/ggfit.h:

src/llama/arch.h:

src/llama/model.h:

src/llama/patterns.h:
