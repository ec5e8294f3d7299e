#!/usr/bin/env python3
"""Image verification time (issue 50): 50 signed images checked by `kudo package images`.

    KUDO_BENCH_BIN=target/release python3 bench/images.py     # default: target/debug

It starts Debian's docker-registry on loopback, pushes examples/zookeeper-v1beta1 to N
repositories (N_IMAGES, 50) and signs each in cosign 3's format (a Sigstore bundle on the
referrers fallback tag: docker-registry 2.8 has no referrers API), writes a package whose one
Deployment runs all N as containers, then times `kudo package images PKG --image-key K`:

- cold: no verification cached (each image: its tag resolved to a digest, its referrers and
  its bundle read, the signature checked);
- warm: run again, every verification read from the cache by digest (each tag still resolved).

It prints one line per run with the wall time and how many images were verified.
"""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
N = int(os.environ.get("N_IMAGES", "50"))
BIN = pathlib.Path(os.environ.get("KUDO_BENCH_BIN", ROOT / "target" / "debug"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    kudo = BIN / "kudo"
    if not kudo.exists():
        sys.exit(f"{kudo}: build it first (cargo build --bin kudo)")
    work = pathlib.Path(tempfile.mkdtemp(prefix="kudo-bench-images-"))
    env = dict(os.environ, HOME=str(work), KUDO_HOME=str(work / "kudo"),
               XDG_CONFIG_HOME=str(work / "config"), XDG_CACHE_HOME=str(work / "cache"),
               DOCKER_CONFIG=str(work / "docker"), KUDO_PASSWORD="bench", NO_COLOR="1")
    env.pop("KUDO_REGISTRY_CA_FILE", None)
    host = f"127.0.0.1:{free_port()}"
    (work / "registry.yml").write_text(
        f"version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n"
        f"  filesystem:\n    rootdirectory: {work / 'storage'}\nhttp:\n  addr: {host}\n")
    registry = subprocess.Popen(["docker-registry", "serve", str(work / "registry.yml")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", int(host.split(":")[1])), 1).close()
                break
            except OSError:
                time.sleep(0.1)
        run = lambda *a: subprocess.run([str(kudo), *a], env=env, check=True,
                                        capture_output=True, text=True)
        keys = work / "keys"
        keys.mkdir()
        run("package", "generate-key", "-d", str(keys))
        images = []
        for i in range(N):
            # each its own content, so each its own digest (a verification is cached by digest)
            src = work / f"src{i}"
            shutil.copytree(ROOT / "examples" / "zookeeper-v1beta1", src)
            op = src / "operator.yaml"
            op.write_text(op.read_text() + f"\n# image {i}\n")
            out = run("package", "push", str(src),
                      f"oci://{host}/bench/r{i}", "--plain-http", "-o", "json")
            ref = json.loads(out.stdout)["reference"]
            run("package", "sign", ref, "--key", str(keys / "cosign.key"), "--plain-http")
            images.append(ref.removeprefix("oci://"))
        pkg = work / "fifty"
        (pkg / "templates").mkdir(parents=True)
        (pkg / "operator.yaml").write_text(
            "apiVersion: kudo.dev/v1beta1\nname: fifty\noperatorVersion: 0.1.0\n"
            "kubernetesVersion: 1.20.0\ntasks:\n  - name: app\n    kind: Apply\n    spec:\n"
            "      resources: [app.yaml]\nplans:\n  deploy:\n    strategy: serial\n    phases:\n"
            "      - name: main\n        strategy: serial\n        steps:\n          - name: app\n"
            "            tasks: [app]\n")
        (pkg / "params.yaml").write_text("apiVersion: kudo.dev/v1beta2\ntype: object\n"
                                         "properties: {}\n")
        containers = "".join(f"        - name: c{i}\n          image: {img}\n"
                             for i, img in enumerate(images))
        (pkg / "templates" / "app.yaml").write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n"
            "  selector:\n    matchLabels: {app: a}\n  template:\n    metadata:\n"
            f"      labels: {{app: a}}\n    spec:\n      containers:\n{containers}")
        for label in ["cold", "warm", "warm"]:
            start = time.monotonic()
            out = run("package", "images", str(pkg), "--plain-http", "-o", "json",
                      "--image-key", str(keys / "cosign.pub"))
            took = time.monotonic() - start
            found = json.loads(out.stdout)["images"]
            verified = sum(1 for i in found if i["verification"]["status"] == "verified")
            cached = sum(1 for i in found if i["verification"].get("cached"))
            print(f"images: {label}: {verified}/{len(found)} verified ({cached} from the cache) "
                  f"in {took:.2f} s", flush=True)
    finally:
        registry.kill()
        registry.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
