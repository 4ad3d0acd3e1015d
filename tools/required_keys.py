"""usage: tools/required_keys.py LLAMA_SRC

The keys each architecture's load_arch_hparams reads without a default
(src/models/<arch>.cpp at the reference version: an ml.get_key(...) at the
function's top level, not in a branch, without `false`), one line an
architecture: its name, a tab, the keys after "<arch>.". llama.cpp refuses
a file without them ("key not found in model"), and so does ggfit: each is
in its architecture's row, `.required_keys` (src/models/<arch>.c), checked
before anything is sized (src/project/arch_keys.c). A key read in a branch
(an expert count, a layer count switch) is not listed: where llama.cpp
loads a file, ggfit must plan it.
"""
import glob
import os
import re
import sys

src = os.path.join(sys.argv[1] if len(sys.argv) > 1 else '.', 'src')
arch=open(src+'/llama-arch.cpp').read()
kv=dict(re.findall(r'\{\s*(LLM_KV_\w+),\s*"([^"]+)"\s*\}',arch))
names=dict(re.findall(r'\{\s*(LLM_ARCH_\w+),\s*"([^"]+)"\s*\}',arch))
model=open(src+'/llama-model.cpp').read()
# map class -> archs
cls_arch={}
pending=[]
for line in model.split('\n')[:400]:
    m=re.match(r'\s*case (LLM_ARCH_\w+):',line)
    if m: pending.append(m.group(1)); continue
    m=re.search(r'new (llama_model_\w+)\(',line)
    if m and pending:
        cls_arch.setdefault(m.group(1),[]).extend(pending); pending=[]
req={}
for f in sorted(glob.glob(src+'/models/*.cpp')):
    text=open(f).read()
    for m in re.finditer(r'void (llama_model_\w+)::load_arch_hparams\(llama_model_loader & ml\) \{\n(.*?)\n\}\n',text,re.S):
        cls,body=m.group(1),m.group(2)
        keys=[]
        for line in body.split('\n'):
            mm=re.match(r'^    ml\.get_key\((LLM_KV_\w+),\s*([^,]+?)\s*(,\s*(true|false))?\);',line)
            if mm and mm.group(4)!='false':
                k=kv.get(mm.group(1),'?')
                if k.startswith('%s.') and k[3:] not in keys: keys.append(k[3:])
        for a in cls_arch.get(cls,[]):
            req[names[a]]=keys
for a in sorted(req): print(a+'\t'+','.join(req[a]))
