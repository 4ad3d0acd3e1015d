build-tsan/obj/llama/patterns.o: src/llama/patterns.c \
  src/llama/patterns.h

src/llama/patterns.h:
