#!/usr/bin/env python3
# relink.py BUILD OUT BUILDNUM COMMIT (tests/llama_version/README): a copy of BUILD/bin in OUT/bin whose
# libllama-common.so carries build info BUILDNUM/COMMIT (build-info.cpp
# recompiled, libllama-common relinked; nothing else rebuilt).
import os, re, shutil, subprocess, sys
build, out, num, commit = sys.argv[1:5]
ninja = open(os.path.join(build, 'build.ninja')).read()
m = re.search(r'^build bin/(libllama-common\.so\.0\.[0-9.]+): \S+ ([^\n|]*)[^\n]*\n((?:  [^\n]*\n)*)', ninja, re.M)
target = m.group(1)
objs = m.group(2).split()
vars = dict(re.findall(r'^  (\w+) = (.*)$', m.group(3), re.M))
b = re.search(r'^build common/CMakeFiles/llama-common-base\.dir/build-info\.cpp\.o: \S+ (\S+)[^\n]*\n((?:  [^\n]*\n)*)', ninja, re.M)
bvars = dict(re.findall(r'^  (\w+) = (.*)$', b.group(2), re.M))
src = open(b.group(1)).read()
src = re.sub(r'int LLAMA_BUILD_NUMBER = \d+;', 'int LLAMA_BUILD_NUMBER = %s;' % num, src)
src = src.replace('char const * LLAMA_COMMIT = "unknown";', 'char const * LLAMA_COMMIT = "%s";' % commit)
os.makedirs(out + '/obj', exist_ok=True)
if os.path.exists(out + '/bin'): shutil.rmtree(out + '/bin')
shutil.copytree(build + '/bin', out + '/bin', symlinks=True)
open(out + '/obj/build-info.cpp', 'w').write(src)
sh = lambda c: subprocess.run(c, shell=True, check=True, cwd=build)
sh('c++ %s %s -c %s/obj/build-info.cpp -o %s/obj/build-info.o' % (bvars['FLAGS'], bvars['INCLUDES'], out, out))
sh('rm -f %s/obj/libbase.a && ar qc %s/obj/libbase.a %s/obj/build-info.o' % (out, out, out))
libs = vars['LINK_LIBRARIES'].replace('common/libllama-common-base.a', out + '/obj/libbase.a')
sh('c++ -fPIC %s %s -shared -Wl,-soname,libllama-common.so.0 -o %s/bin/%s %s %s' % (
    vars.get('LANGUAGE_COMPILE_FLAGS', ''), vars.get('LINK_FLAGS', ''), out, target, ' '.join(objs), libs))
# the program links the build info too (its copy wins): relinked with this
# copy's libraries on its RUNPATH
e = re.search(r'^build bin/llama-server: \S+ ([^\n|]*)[^\n]*\n((?:  [^\n]*\n)*)', ninja, re.M)
evars = dict(re.findall(r'^  (\w+) = (.*)$', e.group(2), re.M))
elibs = evars['LINK_LIBRARIES'].replace('common/libllama-common-base.a', out + '/obj/libbase.a')
elibs = elibs.replace('-Wl,-rpath,' + build + '/bin', '-Wl,-rpath,' + out + '/bin')
sh('c++ %s %s %s -o %s/bin/llama-server %s' % (evars.get('FLAGS', ''), evars.get('LINK_FLAGS', ''),
   e.group(1), out, elibs))
