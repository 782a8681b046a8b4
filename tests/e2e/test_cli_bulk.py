"""Bulk CLI work: `redemptions generate` prints the codes once (stdout or --out) and they
redeem; `logs export` writes the request log as CSV; mistakes get a clear error; both are
audited or read-only as they should be."""

import csv
import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import openai

from switchgate.billing.redemption import CODE_PREFIX
from tests.conftest import Gateway
from tests.support import ROOT, gateway_env, run_cli, wait_for


def test_generate_codes_to_stdout_and_file(tmp_path: Path) -> None:
    env = gateway_env(tmp_path, None)
    made = run_cli(env, "redemptions", "generate", "3", "1.50", "--note", "workshop")
    codes = made.stdout.split()
    assert len(codes) == 3 and all(c.startswith(CODE_PREFIX) for c in codes)
    assert "3 codes worth 1.50 USD each" in made.stderr and "shown only this once" in made.stderr
    out = tmp_path / "codes.txt"
    run_cli(env, "redemptions", "generate", "1200", "0.25", "--out", str(out))
    saved = out.read_text().split()
    assert len(saved) == len(set(saved)) == 1200
    audit = run_cli(env, "audit", "list").stdout
    assert audit.count("cli redemptions generate") == 2
    refused = run_cli(env, "redemptions", "generate", "0", "1", check=False)
    assert refused.returncode == 2 and "1 to 10000 codes" in refused.stderr
    refused = run_cli(env, "redemptions", "generate", "2", "-1", check=False)
    assert refused.returncode == 2 and "error:" in refused.stderr


def test_a_terminal_sees_a_progress_bar(tmp_path: Path) -> None:
    env = gateway_env(tmp_path, None)
    run_cli(env, "migrate")
    leader, follower = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "switchgate", "redemptions", "generate", "1500", "1"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=follower,
        timeout=60,
        check=True,
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert b"generating codes [" in drawn and b"1500/1500" in drawn
    assert len(proc.stdout.split()) == 1500  # the codes themselves stay clean


def test_export_logs_as_csv(gateway: Gateway, tmp_path: Path) -> None:
    email, token = gateway.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    sdk.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": "hi"}])

    def exported() -> list[dict[str, str]]:
        text = run_cli(gateway.env, "logs", "export", "--user", email).stdout
        return list(csv.DictReader(io.StringIO(text)))

    rows = wait_for(exported)
    assert len(rows) == 1 and rows[0]["model"] == "gpt-mock" and rows[0]["status"] == "200"
    out = tmp_path / "logs.csv"
    done = run_cli(gateway.env, "logs", "export", "--user", email, "--out", str(out))
    assert "1 request log rows exported" in done.stderr
    assert out.read_text().splitlines()[0].startswith("created_at,request_id,model")
    bad = run_cli(gateway.env, "logs", "export", "--since", "yesterday", check=False)
    assert bad.returncode == 2 and "--since must look like 2026-01-31" in bad.stderr
    bad = run_cli(gateway.env, "logs", "export", "--user", "nobody@example.com", check=False)
    assert bad.returncode == 2 and "no user" in bad.stderr
