# The page (web/, docs/browser.md), in the WebAssembly build: its module, cppgrad-gpt's trainer and web::Session for a
# Web Worker (cppgrad_web.js / .wasm), and the target web_dist, which puts what a static server hosts in the build
# folder (build-wasm/web/dist), never in the source tree. Included from web/CMakeLists.txt.
add_executable(cppgrad_web ${PROJECT_SOURCE_DIR}/web/bindings.cpp)
target_link_libraries(cppgrad_web PRIVATE cppgrad_web_session)
# The page's link, not the tests': the in-memory file system (the worker writes the word list and checkpoints into
# it; NODERAWFS would need node), a module the worker instantiates, the runtime kept alive between calls.
set_property(TARGET cppgrad_web PROPERTY LINK_OPTIONS
  ${CPPGRAD_WASM_FLAGS} -lembind -sMODULARIZE=1 -sEXPORT_NAME=createCppgrad -sENVIRONMENT=web,worker,node
  -sALLOW_MEMORY_GROWTH=1 -sEXPORTED_RUNTIME_METHODS=FS,ENV)
set_target_properties(cppgrad_web PROPERTIES SUFFIX .js RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/web)

# The page as served: the module, web/*.html|css|js, and the word list with its notice, Debian's wamerican
# (cppgrad-gpt's default data), copied at build time.
set(CPPGRAD_WEB_WORDS /usr/share/dict/american-english CACHE FILEPATH "The word list the page trains on (wamerican)")
set(CPPGRAD_WEB_WORDS_NOTICE /usr/share/doc/wamerican/copyright CACHE FILEPATH "Its copyright notice (SCOWL)")
set(CPPGRAD_WEB_DIST ${CMAKE_BINARY_DIR}/web/dist CACHE INTERNAL "Where web_dist puts the page (the page's tests serve it)")
file(GLOB CPPGRAD_WEB_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/web/*.html ${PROJECT_SOURCE_DIR}/web/*.css
                                               ${PROJECT_SOURCE_DIR}/web/*.js)
if(EXISTS ${CPPGRAD_WEB_WORDS} AND EXISTS ${CPPGRAD_WEB_WORDS_NOTICE})
  add_custom_target(web_dist ALL
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CPPGRAD_WEB_DIST}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:cppgrad_web> $<TARGET_FILE_DIR:cppgrad_web>/cppgrad_web.wasm
            ${CPPGRAD_WEB_FILES} ${CPPGRAD_WEB_DIST}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CPPGRAD_WEB_WORDS} ${CPPGRAD_WEB_DIST}/words.txt
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CPPGRAD_WEB_WORDS_NOTICE} ${CPPGRAD_WEB_DIST}/words-NOTICE.txt
    DEPENDS cppgrad_web ${CPPGRAD_WEB_FILES}
    COMMENT "${CPPGRAD_WEB_DIST}: the page, its module and the word list")
else()
  add_custom_target(web_dist ALL
    COMMAND ${CMAKE_COMMAND} -E echo "web_dist needs Debian's word list ${CPPGRAD_WEB_WORDS} and its notice "
            "${CPPGRAD_WEB_WORDS_NOTICE}: sudo apt-get install wamerican"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()
