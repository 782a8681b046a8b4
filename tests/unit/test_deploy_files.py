"""The files in deploy/ are linted and checked offline, with tools from PyPI (the `test`
extra): hadolint for the Dockerfile, yamllint for every YAML file, the Compose spec's JSON
schema for compose.yaml, `kubectl kustomize` to render the Kubernetes base and overlay,
kubernetes-validate (strict) for every rendered object, and Debian's nginx (`nginx -t`,
installed without starting it by scripts/test as root) for the load balancer's config. A
missing tool skips its test, except in CI. No Docker daemon or cluster is needed."""

import base64
import json
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import IN_CI, ROOT

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
SCHEMAS = ROOT / "tests" / "deploy_schemas"
KUBERNETES_VERSION = "1.30.0"  # the oldest minor we promise; validated strictly


def _tool(name: str, install: str = "pip install -e '.[test]'") -> str:
    """The linter's path: next to this interpreter (the venv), on PATH or in /usr/sbin
    (where Debian puts nginx, not always on a non-root PATH)."""
    beside = Path(sys.executable).parent / name
    sbin = Path("/usr/sbin") / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None and sbin.exists():
        found = str(sbin)
    if found is None:
        if IN_CI:
            pytest.fail(f"{name} is required in CI ({install})")
        pytest.skip(f"{name} is not installed ({install})")
    return found


def _run(*args: str) -> str:
    result = subprocess.run(
        args, check=False, capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, f"{' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _drain_budget(env: dict[str, str]) -> float:
    return float(env["SWITCHGATE_DRAIN_DELAY_SECONDS"]) + float(env["SWITCHGATE_DRAIN_SECONDS"])


# -- Dockerfile ----------------------------------------------------------------------


def test_dockerfile_passes_hadolint() -> None:
    _run(_tool("hadolint"), "--failure-threshold", "info", "deploy/Dockerfile")


def test_dockerfile_is_multi_stage_slim_non_root_with_healthcheck() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    assert len(stages) >= 2, "multi-stage: build, then a clean runtime"
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.\d+-slim", text, re.M)
    final = stages[-1]
    assert "COPY --from=build" in final
    assert not re.search(r"apt-get|gcc|build-essential|pip install", final), "no build tools"
    user = re.search(r"^USER (\S+)", final, re.M)
    assert user and user.group(1).split(":")[0] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n.*/healthz", final, re.M)
    assert re.search(r'^ENTRYPOINT \["switchgate"\]', final, re.M)  # exec form: gets SIGTERM
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert ignore[ignore.index("*") + 1 :][:3] == ["!pyproject.toml", "!README.md", "!switchgate/"]


# -- YAML ------------------------------------------------------------------------------


def test_every_yaml_file_passes_yamllint() -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in DEPLOY.rglob("*.yaml"))
    assert len(files) >= 12
    _run(_tool("yamllint"), "--strict", "-c", "deploy/.yamllint", *files)


# -- Compose ---------------------------------------------------------------------------


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return data


def test_compose_file_matches_the_compose_spec_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "compose-spec.json").read_text())
    validator = jsonschema.Draft201909Validator(schema)
    errors = [e.message for e in validator.iter_errors(_compose())]
    assert errors == []
    broken = _compose()
    broken["services"]["gateway"]["deploy"]["replica"] = 2
    assert list(validator.iter_errors(broken)), "the schema must catch a typo"


def test_compose_runs_two_replicas_behind_a_streaming_load_balancer() -> None:
    services = _compose()["services"]
    gateway = services["gateway"]
    assert gateway["deploy"]["replicas"] == 2
    assert gateway["env_file"] == ".env"
    assert (DEPLOY / "env.example").exists()
    env = gateway["environment"]
    assert env["SWITCHGATE_DATABASE_URL"].startswith("postgresql+asyncpg://")
    assert env["SWITCHGATE_REDIS_URL"].startswith("redis://redis:")
    assert float(gateway["stop_grace_period"].rstrip("s")) > _drain_budget(env)
    assert {"postgres", "redis", "lb"} <= set(services)
    assert services["postgres"]["volumes"][0].startswith("postgres-data:")
    assert services["redis"]["volumes"][0].startswith("redis-data:")
    assert services["migrate"]["command"] == ["migrate"]
    nginx = (DEPLOY / "nginx.conf").read_text()
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in services["lb"]["volumes"]
    assert re.search(r"^\s*proxy_buffering off;", nginx, re.M)
    read_timeout = re.search(r"^\s*proxy_read_timeout (\d+)s;", nginx, re.M)
    assert read_timeout and int(read_timeout.group(1)) >= 600
    assert "http://gateway:8080" in nginx


def _nginx_test(conf: Path, prefix: Path) -> subprocess.CompletedProcess[str]:
    nginx = _tool("nginx", "apt-get install nginx-light; scripts/test does it as root")
    return subprocess.run(
        [nginx, "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_nginx_config_passes_nginx_t(tmp_path: Path) -> None:
    """`nginx -t` parses deploy/nginx.conf with the real nginx (resolving nothing: the
    upstream is a variable, resolved per request by Docker's DNS). Nothing is started."""
    conf = tmp_path / "nginx.conf"
    conf.write_text((DEPLOY / "nginx.conf").read_text())
    result = _nginx_test(conf, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr and "test is successful" in result.stderr


def test_nginx_t_rejects_a_broken_config(tmp_path: Path) -> None:
    """The check can fail: a misspelt directive in the same file is refused."""
    conf = tmp_path / "nginx.conf"
    text = (DEPLOY / "nginx.conf").read_text()
    assert "proxy_buffering off;" in text
    conf.write_text(text.replace("proxy_buffering off;", "proxy_bufering off;"))
    result = _nginx_test(conf, tmp_path)
    assert result.returncode != 0
    assert 'unknown directive "proxy_bufering"' in result.stderr


def test_the_load_balancer_is_nginx_only() -> None:
    """Only nginx.conf is checked with its own tool: there is no HAProxy or Caddy config
    in deploy/ that would need `haproxy -c` or `caddy validate` too."""
    names = {p.name.lower() for p in DEPLOY.rglob("*")}
    assert not {n for n in names if "haproxy" in n or "caddy" in n}
    assert _compose()["services"]["lb"]["image"].startswith("nginx")


# -- Kubernetes ------------------------------------------------------------------------


@cache
def _render(path: str) -> tuple[dict[str, Any], ...]:
    out = _run(_tool("kubectl"), "kustomize", path)
    return tuple(doc for doc in yaml.safe_load_all(out) if doc)


def _by_kind(docs: tuple[dict[str, Any], ...]) -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in docs}


@pytest.mark.parametrize("path", ["deploy/k8s/base", "deploy/k8s/overlays/external"])
def test_kustomize_renders_objects_valid_against_the_kubernetes_schema(path: str) -> None:
    validate = pytest.importorskip("kubernetes_validate")
    docs = _render(path)
    kinds = sorted(doc["kind"] for doc in docs)
    expected = [
        "ConfigMap",
        "Deployment",
        "HorizontalPodAutoscaler",
        "Ingress",
        "Job",
        "PodDisruptionBudget",
        "Secret",
        "Service",
        "ServiceAccount",
    ]
    assert sorted(set(kinds) - {"Namespace"}) == expected
    for doc in docs:
        validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_schema_check_rejects_a_broken_manifest() -> None:
    validate = pytest.importorskip("kubernetes_validate")
    deployment = json.loads(json.dumps(_by_kind(_render("deploy/k8s/base"))["Deployment"]))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessprobe"] = {}
    with pytest.raises(validate.ValidationError):
        validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_deployment_probes_resources_and_drain_budget() -> None:
    objects = _by_kind(_render("deploy/k8s/base"))
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    gateway = pod["containers"][0]
    assert gateway["args"] == ["serve"]
    assert gateway["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert gateway["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gateway["resources"]["requests"]["cpu"] and gateway["resources"]["limits"]["memory"]
    assert {"configMapRef", "secretRef"} <= {k for e in gateway["envFrom"] for k in e}
    config = objects["ConfigMap"]["data"]
    assert pod["terminationGracePeriodSeconds"] > _drain_budget(config)
    assert pod["securityContext"]["runAsNonRoot"] is True
    rolling = objects["Deployment"]["spec"]["strategy"]["rollingUpdate"]
    assert rolling["maxUnavailable"] == 0
    assert objects["PodDisruptionBudget"]["spec"]["minAvailable"] >= 1
    assert objects["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 2
    annotations = objects["Ingress"]["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 600
    job = objects["Job"]["spec"]["template"]["spec"]
    assert job["containers"][0]["args"] == ["migrate"] and job["restartPolicy"] == "Never"
    selector = objects["Service"]["spec"]["selector"]
    assert (
        selector.items() <= objects["Deployment"]["spec"]["template"]["metadata"]["labels"].items()
    )


def test_overlay_points_at_external_postgres_and_redis() -> None:
    objects = _by_kind(_render("deploy/k8s/overlays/external"))
    secret = objects["Secret"]
    values = secret.get("stringData") or {
        k: base64.b64decode(v).decode() for k, v in secret["data"].items()
    }
    assert "pg.internal.example.com" in values["SWITCHGATE_DATABASE_URL"]
    assert values["SWITCHGATE_REDIS_URL"].startswith("rediss://")
    image = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/switchgate:0.1.0"
    assert objects["Job"]["spec"]["template"]["spec"]["containers"][0]["image"] == image
    assert all(
        o["metadata"].get("namespace") == "switchgate"
        for k, o in objects.items()
        if k != "Namespace"
    )
