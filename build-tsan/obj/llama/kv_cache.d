build-tsan/obj/llama/kv_cache.o: src/llama/kv_cache.c src/base/base.h \
  include/ggfit.h src/llama/project.h src/llama/arch.h src/llama/model.h

src/base/base.h:

include/ggfit.h:

src/llama/project.h:

src/llama/arch.h:

src/llama/model.h:
