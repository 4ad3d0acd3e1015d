build-tsan/obj/llama/override.o: src/llama/override.c src/base/base.h \
  include/ggfit.h src/llama/model.h src/llama/patterns.h \
  src/llama/project.h src/llama/arch.h

src/base/base.h:

include/ggfit.h:

src/llama/model.h:

src/llama/patterns.h:

src/llama/project.h:

src/llama/arch.h:
