"""Generates the kops grid jobs."""

import hashlib

DISTROS = ['u2204', 'u2404', 'deb12', 'al2023', 'rhel10', 'rocky10', 'flatcar']
K8S_VERSIONS = ['1.33', '1.34', '1.35']
KOPS_VERSIONS = [None, '1.33', '1.34', '1.35']
NETWORKINGS = ['calico', 'cilium', 'kindnet', 'kubenet']


def build_test(cloud, distro, k8s_version, kops_version, networking):
    """Returns the job definition for one grid cell."""
    extra_flags = []
    if distro in ('rhel10', 'rocky10'):
        # These images ship nftables only.
        extra_flags.append('--set=spec.kubeProxy.proxyMode=nftables')
    if networking == 'kubenet' and cloud == 'gce':
        return None
    name = f"e2e-kops-grid-{cloud}-{networking}-{distro}-k{k8s_version.replace('.', '')}"
    if kops_version:
        name += f"-ko{kops_version.replace('.', '')}"
    return {
        'name': name,
        'cron': cron_for(name),
        'extra_flags': extra_flags,
    }


def cron_for(name):
    """Spreads the grid over the day."""
    h = int(hashlib.md5(name.encode()).hexdigest()[:8], 16)
    return f"{h % 60} {h % 24} * * *"


def generate_grid():
    """All cells of the grid."""
    results = []
    for cloud in ('aws', 'gce'):
        for distro in DISTROS:
            for k8s_version in K8S_VERSIONS:
                for kops_version in KOPS_VERSIONS:
                    for networking in NETWORKINGS:
                        job = build_test(cloud, distro, k8s_version, kops_version, networking)
                        if job:
                            results.append(job)
    return results
