build-tsan/obj/llama/weights.o: src/llama/weights.c src/base/base.h \
  include/ggfit.h src/llama/model.h src/llama/project.h src/llama/arch.h

src/base/base.h:

include/ggfit.h:

src/llama/model.h:

src/llama/project.h:

src/llama/arch.h:
