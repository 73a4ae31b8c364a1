# tiktoken_ref.py encodes strings with o200k_base and cl100k_base the way
# OpenAI's tiktoken does, independently of tiktoken-go and of this
# repository's Go code: the split pattern is read from a checkout of
# openai/tiktoken (tiktoken_ext/openai_public.py, as written there) and run
# with Python's `regex` module, each piece is merged with the BPE of
# tiktoken/_educational.py, and the ranks come from js-tiktoken's rank
# files (scripts/fixtures.sh installs them). It is how the tiktoken-go pin
# in docs/tokenizers.md was decided.
#
#   python3 scripts/tokref/tiktoken_ref.py TIKTOKEN_CHECKOUT '["text", ...]'
#
# prints "encoding json-string [ids]" per encoding and string.
import ast, base64, json, os, sys, regex, subprocess
R=os.path.join(os.environ.get('MTKIT_FIXTURES', os.path.join(os.environ.get('MTKIT_CACHE', os.path.expanduser('~/.cache/mtkit')), 'fixtures')), 'node_modules/js-tiktoken/dist/ranks/')
def ranks(name):
    s=open(R+name+'.js').read()
    d=json.loads(s[s.index('{'):s.rindex('}')+1])
    m={}
    for line in filter(None,d['bpe_ranks'].split('\n')):
        _,off,*toks=line.split(' ')
        for i,t in enumerate(toks): m[base64.b64decode(t)]=int(off)+i
    return m
# the pattern strings, evaluated from the source as written
src=open(os.path.join(sys.argv[1],'tiktoken_ext','openai_public.py')).read()
tree=ast.parse(src)
pats={}
for f in tree.body:
    if isinstance(f,ast.FunctionDef) and f.name in ('cl100k_base','o200k_base'):
        code=compile(ast.Module(body=[f],type_ignores=[]),'x','exec')
        g={'load_tiktoken_bpe':lambda *a,**k:{}, 'ENDOFTEXT':'<|endoftext|>','FIM_PREFIX':'','FIM_MIDDLE':'','FIM_SUFFIX':'','ENDOFPROMPT':''}
        exec(code,g); pats[f.name]=g[f.name]()['pat_str']
def bpe(mr, b):
    if b in mr: return [mr[b]]
    parts=[bytes([x]) for x in b]
    while True:
        mi=None; mn=None
        for i,(p,q) in enumerate(zip(parts[:-1],parts[1:])):
            r=mr.get(p+q)
            if r is not None and (mn is None or r<mn): mi,mn=i,r
        if mn is None: break
        parts=parts[:mi]+[parts[mi]+parts[mi+1]]+parts[mi+2:]
    return [mr[p] for p in parts]
RK={}
def encode(enc, text):
    if enc not in RK: RK[enc]=ranks(enc)
    pat=regex.compile(pats[enc])
    out=[]
    pieces=pat.findall(text)
    for p in pieces: out+=bpe(RK[enc],p.encode('utf-8'))
    return pieces,out
if __name__=='__main__':
    for enc in ('o200k_base','cl100k_base'):
        for t in json.loads(sys.argv[2]):
            print(enc, json.dumps(t), encode(enc,t)[1])
