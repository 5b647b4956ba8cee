import glob, time
from tb_gpu_advisor.formats.xplane import adapter
p=glob.glob(f'/work/shared/profiles/real-h100-jax/gpt_bf16/plugins/profile/*/*.xplane.pb')[0]
real=adapter.flop_ops_of
acc=[]
def timed(meta):
    t=time.process_time(); r=real(meta); acc.append(time.process_time()-t); return r
adapter.flop_ops_of=timed
ts=[]
for _ in range(20):
    t=time.process_time(); adapter.read_trace(p); ts.append(time.process_time()-t)
print('read min', min(ts)*1e3, 'flop_ops_of min', min(acc)*1e3, 'median', sorted(acc)[10]*1e3)
