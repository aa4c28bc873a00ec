# The smallest x86_64 device set megpu needs: a q35 machine booted with
# qboot, a serial console and the megpu device (-nodefaults -nic none).
CONFIG_Q35=y
CONFIG_MEGPU=y
# megpu is a PCI Express endpoint: run.sh puts each behind a root port
CONFIG_PCIE_PORT=y
CONFIG_SERIAL_ISA=y
CONFIG_ISA_DEBUG=y
