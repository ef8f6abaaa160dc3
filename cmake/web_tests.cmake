# The page's tests (docs/browser.md), in the WebAssembly build beside its module (tests/CMakeLists.txt includes this
# where the target cppgrad_web is): under node, its numbers against native cppgrad-gpt's (label wasm), and the page
# in Chromium (label browser, run by `ctest --preset browser`, not by `ctest --preset wasm`).
# The native build's bin/ beside this one (.ci/run's stage 1 builds it): its cppgrad-gpt checks the page's numbers and
# its checkpoint.
set(CPPGRAD_NATIVE_BIN_DIR ${PROJECT_SOURCE_DIR}/build/bin CACHE PATH
    "The native build's bin/, whose cppgrad-gpt the page's tests compare with")

# The page's numbers against native cppgrad-gpt's (tests/web/same_numbers.js): the module the page loads, under node.
add_test(NAME wasm_web_same_numbers
         COMMAND ${CPPGRAD_NODE} ${PROJECT_SOURCE_DIR}/tests/web/same_numbers.js $<TARGET_FILE:cppgrad_web>
                 ${CPPGRAD_NATIVE_BIN_DIR} ${CPPGRAD_WEB_WORDS} ${CMAKE_BINARY_DIR}/web/same_numbers)
set_tests_properties(wasm_web_same_numbers PROPERTIES LABELS wasm TIMEOUT 900)
# A BPE checkpoint trained natively, loaded by the page's module with its dropped text (tests/web/bpe_checkpoint.js).
add_test(NAME wasm_web_bpe_checkpoint
         COMMAND ${CPPGRAD_NODE} ${PROJECT_SOURCE_DIR}/tests/web/bpe_checkpoint.js $<TARGET_FILE:cppgrad_web>
                 ${CPPGRAD_NATIVE_BIN_DIR} ${CMAKE_BINARY_DIR}/web/bpe_checkpoint)
set_tests_properties(wasm_web_bpe_checkpoint PROPERTIES LABELS wasm TIMEOUT 300)

# The page in Chromium (web/test/page.test.mjs): it serves the page the target web_dist put in the build folder
# (CPPGRAD_WEB_DIST, cmake/web_page.cmake) on 127.0.0.1, drives Debian's chromium headless through puppeteer-core,
# trains 200 steps, and checks the downloaded checkpoint with the native cppgrad-gpt. Run it after building web_dist
# and the native program. It fails, never skips, when Chromium, puppeteer-core (npm ci in web/test), the page or the
# native program is missing: each says how to get it.
set(CPPGRAD_CHROMIUM /usr/bin/chromium CACHE FILEPATH "The Chromium the page's test drives (Debian: apt-get install chromium)")

add_test(NAME browser_page
         COMMAND ${CPPGRAD_NODE} ${PROJECT_SOURCE_DIR}/web/test/page.test.mjs --dist ${CPPGRAD_WEB_DIST}
                 --native ${CPPGRAD_NATIVE_BIN_DIR}/cppgrad-gpt --chromium ${CPPGRAD_CHROMIUM}
                 --screenshot ${CMAKE_BINARY_DIR}/browser_page.png)
# 200 steps at about 0.1-0.2 s each on two busy cores, the evaluations (the page's and native's, 15-40 s
# each): about 3 minutes.
set_tests_properties(browser_page PROPERTIES LABELS browser TIMEOUT 900)

# What the page refuses stays out of the run (web/test/guards.test.mjs, issue 40): a phone's width, the number boxes,
# a binary file, errors that clear, the evaluation's notice, the questions before trained steps are lost, a
# checkpoint's losses, a diverged run. About 30 training steps and three evaluations: 1-2 minutes.
add_test(NAME browser_page_guards
         COMMAND ${CPPGRAD_NODE} ${PROJECT_SOURCE_DIR}/web/test/guards.test.mjs
                 --dist ${CPPGRAD_WEB_DIST} --chromium ${CPPGRAD_CHROMIUM})
set_tests_properties(browser_page_guards PROPERTIES LABELS browser TIMEOUT 600)
# ... and that test can fail: each of its cases on a copy of the page with that case's fix undone must fail with the
# case's own message (web/test/guards_planted.mjs; nine runs of the test, each stopping at its case: 3-5 minutes).
add_test(NAME browser_page_guards_catch_planted_faults
         COMMAND ${CPPGRAD_NODE} ${PROJECT_SOURCE_DIR}/web/test/guards_planted.mjs
                 --dist ${CPPGRAD_WEB_DIST} --chromium ${CPPGRAD_CHROMIUM})
set_tests_properties(browser_page_guards_catch_planted_faults PROPERTIES LABELS browser TIMEOUT 900)

# The same test on a page whose worker asks a host off the machine (web/test/planted): it must fail, saying so. The
# expression is the test's own message, so a run that fails for another reason (no Chromium, say) does not pass.
add_test(NAME browser_page_catches_a_request_off_the_machine
         COMMAND ${CPPGRAD_NODE} ${PROJECT_SOURCE_DIR}/web/test/page.test.mjs
                 --dist ${PROJECT_SOURCE_DIR}/web/test/planted --chromium ${CPPGRAD_CHROMIUM})
set_tests_properties(browser_page_catches_a_request_off_the_machine PROPERTIES LABELS browser TIMEOUT 120
                     PASS_REGULAR_EXPRESSION "FAILED: .*a request that is not to the local server: http://example.com/planted")
