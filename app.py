"""CAPEL Studio: navigation and the shared sidebar; each page lives in app_pages/.

The page scripts sit in `app_pages/`, not `pages/`: Streamlit treats a `pages/` folder beside the main script
as a v1 multipage app until `st.navigation` has run once in the process, and would run a bookmarked page
alone, without this file's sidebar (tests/test_app.py checks that every page gets the sidebar).
"""

import streamlit as st

from capel_ui.ui.layout import page_style
from capel_ui.ui.sidebar import run_page, sidebar

st.set_page_config(page_title="CAPEL Studio", page_icon=":material/timer:", layout="wide")
page = st.navigation(
    [
        st.Page("app_pages/write.py", title="Write", icon=":material/edit_note:", default=True),
        st.Page("app_pages/compare.py", title="Compare", icon=":material/view_column:"),
        st.Page("app_pages/batch.py", title="Batch", icon=":material/table_view:"),
        st.Page("app_pages/history.py", title="History", icon=":material/history:"),
        st.Page("app_pages/benchmark.py", title="Benchmark", icon=":material/monitoring:"),
        st.Page("app_pages/models.py", title="Models", icon=":material/download:"),
    ]
)
page_style()
sidebar()
run_page(page)
