"""A throw-away certificate authority and a server certificate for 127.0.0.1, made with the openssl command.

ARM clients (the official SDKs' bearer-token policy, nodesmith's provider) refuse plain HTTP, so the emulator speaks
TLS with a certificate signed by a CA generated at start-up; clients trust that CA alone (NODE_EXTRA_CA_CERTS for
Node, NODESMITH_CA_BUNDLE for nodesmith) and keep verifying host names and chains as they do against Azure.
"""
import os
import ssl
import subprocess


def _run(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_ca_and_server(directory):
    """Writes ca.pem, server.pem and server.key into directory; returns (ca_path, ssl_context)."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    key, csr, cert = (os.path.join(directory, n) for n in ("server.key", "server.csr", "server.pem"))
    ext = os.path.join(directory, "server.ext")
    _run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
         "-subj", "/CN=nodesmith azure emulator test CA", "-keyout", ca_key, "-out", ca,
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1",
         "-keyout", key, "-out", csr)
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
    _run("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "2", "-out", cert,
         "-extfile", ext)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return ca, context
