"""Writes a minimal OCI image layout (one small layer) to the folder given, for skopeo to push."""
import hashlib
import io
import json
import os
import sys
import tarfile

folder = sys.argv[1]
os.makedirs(f"{folder}/blobs/sha256", exist_ok=True)


def blob(data: bytes) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    with open(f"{folder}/blobs/sha256/{digest}", "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + digest, "size": len(data)}


layer_tar = io.BytesIO()
with tarfile.open(fileobj=layer_tar, mode="w") as t:
    content = b"signed in with signin\n"
    info = tarfile.TarInfo("hello.txt")
    info.size = len(content)
    t.addfile(info, io.BytesIO(content))
layer = blob(layer_tar.getvalue())
diff_id = layer["digest"]
config = blob(json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": [diff_id]},
                          "config": {}}).encode())
manifest = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
                            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **layer}]}).encode())
with open(f"{folder}/index.json", "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest,
                                                   "annotations": {"org.opencontainers.image.ref.name": "latest"}}]}, f)
with open(f"{folder}/oci-layout", "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
