# Per-generator CPack settings (CPACK_PROJECT_CONFIG_FILE): the .deb installs under /usr;
# the portable archive holds bin/ and share/ at its top, to run from any folder.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
else()
  set(CPACK_PACKAGING_INSTALL_PREFIX "")
endif()
