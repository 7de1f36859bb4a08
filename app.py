"""CAPEL Studio: navigation and the shared sidebar; each page lives in pages/."""

import streamlit as st

from capel_ui.ui.settings import run_page, sidebar

st.set_page_config(page_title="CAPEL Studio", page_icon=":material/timer:", layout="wide")
page = st.navigation(
    [
        st.Page("pages/write.py", title="Write", icon=":material/edit_note:", default=True),
        st.Page("pages/compare.py", title="Compare", icon=":material/view_column:"),
        st.Page("pages/history.py", title="History", icon=":material/history:"),
        st.Page("pages/benchmark.py", title="Benchmark", icon=":material/monitoring:"),
    ]
)
sidebar()
run_page(page)
