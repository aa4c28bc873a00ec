# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration for `make docs` (tools/vm/docs.sh): the kernel's own
# kernel-doc extension from linux-source-6.12, as the kernel's docs build.
import os
import sys

sys.path.insert(0, os.environ['KERNEL_SPHINX'])

project = 'megpu'
copyright = '2026, the megpu authors'
master_doc = 'index'
extensions = ['kerneldoc']
kerneldoc_bin = os.environ['KERNELDOC']
kerneldoc_srctree = os.environ['MEGPU_TOP']
exclude_patterns = []
html_theme = 'alabaster'
