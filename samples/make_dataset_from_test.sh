#!/bin/bash
# make_dataset --from on files NumPy writes at every run (fresh random values):
# .npz with int64 labels, a CSV with a class column; the records read back as
# written (a Python KILNDATA reader below), the split and shuffle keep every
# record once and repeat under the same seed; bad inputs and command lines
# exit 1 and 2 with messages that name the place.
#   make_dataset_from_test.sh MAKE_DATASET
set -euo pipefail
make_dataset="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}"
python=/usr/bin/python3

# A KILNDATA reader: prints each field as NAME DTYPE SHAPE and a sorted list
# of records (one line per record) to compare with NumPy's.
cat >"${work}/read.py" <<'PY'
import struct, sys
import numpy as np
def read(path):
    b = open(path, 'rb').read()
    magic, version, nfields, rb, n, off, lb = struct.unpack_from('<8sIIQQQQ', b)
    assert magic == b'KILNDATA' and version == 2
    at, fields = 64, []
    for _ in range(nfields):
        ln, = struct.unpack_from('<H', b, at); at += 2
        name = b[at:at + ln].decode(); at += ln
        code, rank = b[at], b[at + 1]; at += 2
        shape = struct.unpack_from('<%dQ' % rank, b, at); at += 8 * rank
        fields.append((name, {1: '<f4', 4: '<i4'}[code], shape))
    records = np.frombuffer(b, np.uint8, n * rb, off).reshape(n, rb)
    out, col = {}, 0
    for name, dt, shape in fields:
        size = int(np.prod(shape, dtype=np.int64)) * 4
        out[name] = records[:, col:col + size].copy().view(dt).reshape((n,) + shape)
        col += size
    return out
PY

# .npz: float64 features [N, 2, 3], int64 labels [N], then the split.
"${python}" - "${work}" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng()
x = rng.standard_normal((40, 2, 3))
y = rng.integers(0, 5, size=40)
np.savez_compressed(d + '/data.npz', features=x, y=y)
big = y.copy(); big[13] = 2**40
np.savez(d + '/big.npz', features=x, y=big)
PY
out="$("${make_dataset}" --from "${work}/data.npz" --out "${work}/train.kilndata" \
  --heldout-out "${work}/held.kilndata" --heldout-fraction 0.25 --shuffle \
  --seed 5 x=features@6 labels=y)"
echo "${out}"
[[ "${out}" == *"field labels: i32[] from"*"40 records; wrote 30 to"*"and 10 held out to"*"(shuffled)"* ]]
"${python}" - "${work}" <<'PY'
import sys, numpy as np
sys.path.insert(0, sys.argv[1]); from read import read
d = sys.argv[1]
src = np.load(d + '/data.npz')
t, h = read(d + '/train.kilndata'), read(d + '/held.kilndata')
x = np.concatenate([t['x'], h['x']]); y = np.concatenate([t['labels'], h['labels']])
assert x.shape == (40, 6) and x.dtype == np.float32 and y.dtype == np.int32
want = {tuple(r) + (l,) for r, l in zip(src['features'].reshape(40, 6).astype(np.float32), src['y'])}
got = {tuple(r) + (l,) for r, l in zip(x, y)}
assert want == got, 'records differ'
assert not np.array_equal(x, src['features'].reshape(40, 6).astype(np.float32)), 'not shuffled'
PY
"${make_dataset}" --from "${work}/data.npz" --out "${work}/again.kilndata" \
  --heldout-out "${work}/again_held.kilndata" --heldout-fraction 0.25 \
  --shuffle --seed 5 x=features@6 labels=y >/dev/null
cmp "${work}/train.kilndata" "${work}/again.kilndata"

# CSV: a class column, a range of columns and an i32 column.
printf 'id,a,b,c,kind\n1,0.5,-1,2e-3,cat\n2,1,2,3,dog\n3,4,5,6,cat\n' >"${work}/t.csv"
out="$("${make_dataset}" --from "${work}/t.csv" --out "${work}/csv.kilndata" \
  --classes-out "${work}/classes.tsv" x=a..c kind:class id:i32)"
echo "${out}"
[[ "${out}" == *"class 0: cat"*"class 1: dog"* ]]
printf 'kind\t0\tcat\nkind\t1\tdog\n' | cmp - "${work}/classes.tsv"
"${python}" - "${work}" <<'PY'
import sys, numpy as np
sys.path.insert(0, sys.argv[1]); from read import read
r = read(sys.argv[1] + '/csv.kilndata')
assert np.array_equal(r['x'], np.array([[0.5, -1, 2e-3], [1, 2, 3], [4, 5, 6]], np.float32))
assert list(r['kind']) == [0, 1, 0] and list(r['id']) == [1, 2, 3]
PY

# Bad inputs: status 1, the place named.
expect() { # status message command...
  local status=$1 message=$2
  shift 2
  set +e
  "$@" >"${work}/out.txt" 2>&1
  local got=$?
  set -e
  if [[ ${got} -ne ${status} ]] || ! grep -qF -- "${message}" "${work}/out.txt"; then
    echo "want status ${status} and '${message}' from: $*"
    echo "got status ${got}:"; cat "${work}/out.txt"; exit 1
  fi
}
o="--out ${work}/bad.kilndata"
expect 1 "big.npz: tensor 'y' element [13]: value 1099511627776 is outside the i32 range" \
  "${make_dataset}" --from "${work}/big.npz" ${o} y
printf 'a,b\n1,2\n3,x\n' >"${work}/bad.csv"
expect 1 "bad.csv:3:3: column 'b': 'x' is not a number" \
  "${make_dataset}" --from "${work}/bad.csv" ${o} v=a..b
printf 'a,b\n1,2\n3\n' >"${work}/ragged.csv"
expect 1 "ragged.csv:3:1: the row has 1 cells, the header 2" \
  "${make_dataset}" --from "${work}/ragged.csv" ${o} a
expect 1 "data.npz: no tensor 'z' (field 'z'; the tensors are" \
  "${make_dataset}" --from "${work}/data.npz" ${o} z
expect 1 "cannot read ${work}/missing.csv" \
  "${make_dataset}" --from "${work}/missing.csv" ${o} a
expect 2 "--from needs FIELD arguments" "${make_dataset}" --from "${work}/t.csv" ${o}
expect 2 "dtype 'u8' is not f32, i32 or class" \
  "${make_dataset}" --from "${work}/t.csv" ${o} a:u8
expect 2 "unexpected argument 'x' (FIELD arguments go with --from)" \
  "${make_dataset}" --task sine ${o} x
expect 2 "--from does not go with --task or --records" \
  "${make_dataset}" --from "${work}/t.csv" --task order ${o} a
echo "make_dataset --from: ok"
