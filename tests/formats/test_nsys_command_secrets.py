"""A recorded command's secrets are masked wherever they stand, and the masked command is still the user's program
(h37-tidy30; the recorded command is shown back in the tracing-off fix, h37-tracingoff3).

Wrong assumption on main (8e587ba8): *a secret on a command line is a ``name=value`` word or the word after a named
option*.  A password after ``-p``, a URL's password, an ``Authorization`` header's credential and any secret inside a
``bash -c`` line were printed as typed; and a ``bash -c 'HF_TOKEN=... python train.py'`` line was cut at its first
``=``, deleting the program from the fix.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.formats.nsys.secrets import MASK

#: (the command as recorded, its secrets, what the masked command must still hold)
HOSTILE = [
    (("bash", "-c", "HF_TOKEN=hf_s3cr3t WANDB_API_KEY=wb_s3cr3t python train.py --token tk_s3cr3t --lr 0.1"),
     ("hf_s3cr3t", "wb_s3cr3t", "tk_s3cr3t"), ("bash -c", "python train.py", "--lr 0.1", "HF_TOKEN=", "--token")),
    (("sshpass", "-p", "pw_s3cr3t", "python", "train.py"), ("pw_s3cr3t",), ("sshpass -p", "python train.py")),
    (("python", "train.py", "--db", "postgres://alice:db_s3cr3t@10.0.0.5:5432/runs"), ("db_s3cr3t",),
     ("python train.py --db", "postgres://alice:", "@10.0.0.5:5432/runs")),
    (("python", "train.py", "--header", "Authorization: Bearer bt_s3cr3t"), ("bt_s3cr3t",),
     ("python train.py --header", "Authorization: Bearer")),
    (("python", "train.py", "Authorization:", "Bearer", "bt_s3cr3t", "--epochs", "3"), ("bt_s3cr3t",),
     ("Authorization: Bearer", "--epochs 3")),
    (("env", "AWS_SECRET_ACCESS_KEY=aws_s3cr3t", "MYSQL_PWD=my_s3cr3t", "python", "train.py"),
     ("aws_s3cr3t", "my_s3cr3t"), ("env AWS_SECRET_ACCESS_KEY=", "python train.py")),
]


@pytest.mark.parametrize("command,secrets,kept", HOSTILE, ids=[c[0] + "-" + c[1] for c, _, _ in HOSTILE])
def test_hostile_commands_are_masked_and_keep_their_program(tmp_path, command, secrets, kept):
    """Each secret's value is the placeholder; the program and its other arguments stay as typed."""
    p = str(tmp_path / "secret.sqlite")
    nx.write_tracing_off_loop(p, command=command, iterations=12)
    shown = reader.read_trace(p).producer["program_command"]
    assert not [s for s in secrets if s in shown], shown
    assert shown.count(MASK) == len(secrets), shown
    assert all(k in shown for k in kept), shown


def test_ports_counts_and_plain_words_are_not_masked(tmp_path):
    """The controls: a port after ``-p``, a URL with no password, a header that is no credential, a ``bash -c`` line
    with no secret (kept as recorded, one quoted argument)."""
    command = ("bash", "-c", "python serve.py -p 8080 --url https://example.com/a --header 'Accept: text/plain'")
    p = str(tmp_path / "plain.sqlite")
    nx.write_tracing_off_loop(p, command=command, iterations=12)
    shown = reader.read_trace(p).producer["program_command"]
    assert MASK not in shown and shown == "bash -c " + "'python serve.py -p 8080 --url https://example.com/a " \
        "--header '\"'\"'Accept: text/plain'\"'\"''", shown
